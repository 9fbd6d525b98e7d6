#!/bin/sh
# man-see-also.sh DOCDIR PROGRAM - the [SEE ALSO] section help2man adds to
# PROGRAM's man page: its guide, the README, the other programs.
docdir=$1 prog=$2
case $prog in
hpc-info) guide=README.md ;;
hpc-collbench) guide=collectives.md ;;
hpc-h5check) guide=data.md ;;
*) guide=${prog#hpc-}.md ;;
esac
printf '[SEE ALSO]\nThe guide: %s/%s; the overview: %s/README.md.\n.PP\n' "$docdir" "$guide" "$docdir"
others=
for p in hpc-info hpc-collbench hpc-odegen hpc-matmul hpc-train hpc-h5check; do
    [ "$p" = "$prog" ] || others="$others $p"
done
set -- $others
while [ $# -gt 0 ]; do
    if [ $# -gt 1 ]; then printf '.BR %s (1),\n' "$1"; else printf '.BR %s (1)\n' "$1"; fi
    shift
done
