# programs_lib.sh - every program with a quick, real piece of work, for
# the tests that start each of them the same way (programs_env.sh,
# launcher.sh; sourced).  Needs B (the build folder) and T (a scratch
# folder; hpc-train reads $T/d.h5, hpc-odegen writes $T/o.h5).
# PROGRAMS: every program of the build (programs.list, made from
# Makefile.am's one list); each must have its piece of work below.
PROGRAMS=$(cut -d' ' -f1 "$B/programs.list")
[ "$(wc -l < "$B/programs.list")" -ge 6 ] || { echo "FAIL: $B/programs.list names too few programs: $PROGRAMS"; exit 1; }
cmd() {
    case $1 in
    hpc-info) echo "$B/apps/info/hpc-info" ;;
    hpc-odegen) echo "$B/apps/odegen/hpc-odegen -q -n 4 --force --out $T/o.h5" ;;
    hpc-collbench) echo "$B/apps/collbench/hpc-collbench -b 8 -e 8 -w 0 -n 1" ;;
    hpc-matmul) echo "$B/apps/matmul/hpc-matmul -q --gen 8,8,8 --verify" ;;
    hpc-h5check) echo "$B/apps/h5check/hpc-h5check -q $T/d.h5" ;;
    hpc-train) echo "$B/apps/train/hpc-train -q --data $T/d.h5 --out $T/run --force --steps 2 --batch 8" ;;
    esac
}
for p in $PROGRAMS; do
    [ -n "$(cmd "$p")" ] || { echo "FAIL: $p is in programs.list but has no quick piece of work in programs_lib.sh"; exit 1; }
done
