#!/bin/sh
# man-see-also.sh DOCDIR PROGRAM LIST - the [SEE ALSO] section help2man
# adds to PROGRAM's man page: its guide, the README, the other programs
# (those of LIST, the build's programs.list: NAME FOLDER a line).
docdir=$1 prog=$2 list=$3
case $prog in
hpc-info) guide=README.md ;;
hpc-collbench) guide=collectives.md ;;
hpc-h5check) guide=data.md ;;
*) guide=${prog#hpc-}.md ;;
esac
printf '[SEE ALSO]\nThe guide: %s/%s; the overview: %s/README.md.\n.PP\n' "$docdir" "$guide" "$docdir"
others=
for p in $(cut -d' ' -f1 "$list"); do
    [ "$p" = "$prog" ] || others="$others $p"
done
set -- $others
while [ $# -gt 0 ]; do
    if [ $# -gt 1 ]; then printf '.BR %s (1),\n' "$1"; else printf '.BR %s (1)\n' "$1"; fi
    shift
done
