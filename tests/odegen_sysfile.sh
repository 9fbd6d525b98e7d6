#!/bin/sh
# odegen_sysfile.sh - systems from the user's C file (--system-file,
# --system-lib, hpc_ode.h):
#  - each built-in's file, compiled at run time, gives the built-in's data
#    bit for bit, and the file records its source and its sha256sum;
#  - a system of the test's own (a vector parameter from a file, an x0
#    hook, hpc_where, hpc_cos, hpc_exp) agrees with scipy, and gives the
#    same bits on 1 and 3 ranks, after a kill and --resume, and as two
#    shards joined;
#  - --compile-to makes an object --system-lib runs to the same data;
#  - the cache: a second run compiles nothing, a comment changes no object,
#    two runs compiling the same new file at once both finish;
#  - bad files and objects are one line (after the compiler's message)
#    and exit 2, with no output file.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
S=$top_srcdir/data/systems
SYS=$top_srcdir/tests/odegen_systems
set -e

step "the built-ins' files give the built-ins' bits"
for case in "decay-sin:-n 200 --rtol 1e-6" "lorenz:-n 100 -m DOP853" "vanderpol:-n 100 -p mu=3 -m RK23" \
            "lotka-volterra:-n 100 --x0-low 0.5 --x0-high 2" "kuramoto:-n 60 -d 6 -p K=2 --seed 3"; do
    name=${case%%:*} args=${case#*:}
    odegen 1 -q -s "$name" $args --out "$T/$name.b.h5" || fail "$name built-in"
    odegen 2 -q --system-file "$S/$name.c" $args --out "$T/$name.f.h5" || fail "$name --system-file"
    same_data "$T/$name.b.h5" "$T/$name.f.h5" || fail "$name: the file's data differs from the built-in's"
    sha=$(sha256sum < "$S/$name.c" | cut -d' ' -f1)
    "$H5DUMP" -a system_sha256 "$T/$name.f.h5" | grep -q "\"$sha\"" || fail "$name: system_sha256 is not sha256sum's"
done
if [ -n "$PYTHON_SCI" ]; then
    "$PYTHON_SCI" - "$T/kuramoto.f.h5" "$S/kuramoto.c" <<'PY' || fail "the recorded source is not the file"
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
src = a["system_source"]
src = src.decode() if isinstance(src, bytes) else src
assert src == open(sys.argv[2]).read(), "system_source differs"
assert list(a["param_omega"].shape) == [6]
PY
fi

step "a system of the test's own: scipy, ranks, resume, shards"
printf '0.5, 0.25\n# the third\n0.125\n' > "$T/amp.txt"
ARGS="--system-file $SYS/forced.c -p amp=@$T/amp.txt -p zeta=0.05 --x0-low -1 --x0-high 1 --nt 21 --seed 4"
odegen 1 -q $ARGS -n 400 --chunk 25 --out "$T/f1.h5" || fail "forced, 1 rank"
odegen 3 -q $ARGS -n 400 --chunk 25 --out "$T/f3.h5" || fail "forced, 3 ranks"
same_data "$T/f1.h5" "$T/f3.h5" || fail "forced: 1 and 3 ranks differ"
if [ -n "$PYTHON_SCI" ]; then
    $PYTHON_SCI -W ignore "$top_srcdir/tests/odegen_ref.py" "$T/f1.h5" --limit 40 --rtol-values 1e-10 ||
        fail "forced: differs from scipy"
fi
HPC_ODEGEN_TEST_KILL=1:3 odegen 2 -q $ARGS -n 400 --chunk 25 --out "$T/fk.h5" 2> /dev/null && fail "the killed run succeeded"
[ -f "$T/fk.h5.partial" ] || fail "no .partial after the kill"
odegen 2 -q $ARGS -n 400 --chunk 25 --out "$T/fk.h5" --resume || fail "forced, --resume"
same_data "$T/f1.h5" "$T/fk.h5" || fail "forced: killed and resumed differs from one run"
mkdir "$T/sh"
odegen 1 -q $ARGS -n 400 --chunk 25 --shard 0/2 --out "$T/sh/f.h5" || fail "shard 0"
odegen 2 -q $ARGS -n 400 --chunk 25 --shard 1/2 --out "$T/sh/f.h5" || fail "shard 1"
odegen 1 -q --join 2 --out "$T/sh/f.h5" || fail "join"
for d in /x0 /y /stats/nsteps /stats/nfev /stats/status; do
    "$H5DIFF" -q "$T/f1.h5" "$T/sh/f.h5" $d $d || fail "forced: joined $d differs from one run"
done

step "--compile-to and --system-lib"
odegen 1 -q --system-file "$SYS/forced.c" --compile-to "$T/forced.so" || fail "--compile-to"
LIB=$(echo "$ARGS" | sed "s|--system-file [^ ]*|--system-lib $T/forced.so|")
odegen 2 -q $LIB -n 400 --chunk 25 --out "$T/fl.h5" || fail "--system-lib"
same_data "$T/f1.h5" "$T/fl.h5" || fail "--system-lib differs from --system-file"
odegen 1 -q $LIB -n 40 -m DOP853 --out "$T/fl8.h5" || fail "--system-lib, DOP853"

step "the cache"
# a cache of its own: the other odegen tests share the build's, and under
# make -j one of them may compile into it between two counts here
HPC_ODEGEN_CACHE=$T/cache
export HPC_ODEGEN_CACHE
odegen 1 -q $ARGS -n 40 --out "$T/first.h5" || fail "the first run, a new cache"
before=$(ls "$HPC_ODEGEN_CACHE"/*.so | wc -l)
[ "$before" -ge 1 ] || fail "the first run left no object in $HPC_ODEGEN_CACHE"
odegen 1 -q $ARGS -n 40 --out "$T/again.h5" || fail "the second run"
[ "$(ls "$HPC_ODEGEN_CACHE"/*.so | wc -l)" = "$before" ] || fail "the second run compiled again"
{ cat "$SYS/forced.c"; echo "/* a comment changes no object */"; } > "$T/commented.c"
odegen 1 -q --system-file "$T/commented.c" -p amp=1,2,3 -n 8 --out "$T/c.h5" || fail "commented"
[ "$(ls "$HPC_ODEGEN_CACHE"/*.so | wc -l)" = "$before" ] || fail "a comment made a new object"
sed 's/0\.1) X(w0/0.125) X(w0/' "$SYS/forced.c" > "$T/twice.c"    # a new system: compiled twice at once
odegen 1 -q --system-file "$T/twice.c" -p amp=1,2,3 -n 50 --out "$T/t1.h5" & pid=$!
odegen 2 -q --system-file "$T/twice.c" -p amp=1,2,3 -n 50 --out "$T/t2.h5" || fail "the second of two at once"
wait $pid || fail "the first of two at once"
same_data "$T/t1.h5" "$T/t2.h5" || fail "two compiles at once differ"

step "bad files and objects: one line, exit 2, no output"
bad() {   # bad WHAT PATTERN ODEGEN-ARGS...: exit 2, last line names it, no file
    what=$1 pat=$2
    shift 2
    odegen 2 -n 10 --out "$T/bad.h5" "$@" > /dev/null 2> "$T/stderr" && fail "$what: succeeded"
    rc=$?
    [ "$rc" = 2 ] || { cat "$T/stderr"; fail "$what: exit $rc, expected 2"; }
    tail -n 1 "$T/stderr" | grep -q "^hpc-odegen: .*$pat" || { cat "$T/stderr"; fail "$what: the last line lacks '$pat'"; }
    [ "$(grep -c '^hpc-odegen: ' "$T/stderr")" = 1 ] || { cat "$T/stderr"; fail "$what: not one line of its own"; }
    ls "$T"/bad.h5* > /dev/null 2>&1 && fail "$what: an output file"
    echo "ok: $(tail -n 1 "$T/stderr")"
}
printf '#include <hpc_ode.h>\nHPC_ODE_RHS(t, x, dxdt, p)\n{\n    dxdt[0] = -x[0] * oops;\n}\nHPC_ODE_SYSTEM(.dim = 1);\n' > "$T/typo.c"
bad "a compile error" "typo.c does not compile (.*typo.c:4:.*oops" --system-file "$T/typo.c"
grep -q "error: .oops. undeclared" "$T/stderr" || fail "the compiler's own message is not shown"
printf '#include <hpc_ode.h>\nHPC_ODE_RHS(t, x, dxdt, p)\n{\n    dxdt[0] = 1.0;\n}\nHPC_ODE_SYSTEM(.dim = 1);\n' > "$T/lone.c"
bad "a lone constant" "8 trajectories at once.*hpc_const" --system-file "$T/lone.c"
printf '#include <hpc_ode.h>\nHPC_ODE_SYSTEM(.dim = 1);\n' > "$T/norhs.c"
bad "no right-hand side" "no right-hand side" --system-file "$T/norhs.c"
printf '#include <hpc_ode.h>\nHPC_ODE_RHS(t, x, dxdt, p)\n{\n    dxdt[0] = x[0];\n}\n' > "$T/nodesc.c"
bad "no description" "HPC_ODE_SYSTEM" --system-file "$T/nodesc.c"
printf '#include <hpc_ode.h>\nHPC_ODE_RHS(t, x, dxdt, p)\n{\n    dxdt[0] = x[0];\n}\nHPC_ODE_SYSTEM(.dim = 0);\n' > "$T/nodim.c"
bad "no dimension" "dimensions do not fit" --system-file "$T/nodim.c"
bad "a missing file" "cannot read" --system-file "$T/absent.c"
bad "--dim of a fixed system" "dimension 2" $ARGS -d 5
bad "a vector of the wrong length" "2 numbers, system test-forced needs 3" --system-file "$SYS/forced.c" -p amp=1,2
bad "a vector not given" "needs this vector of 3" --system-file "$SYS/forced.c"
bad "an unknown parameter" "no parameter 'mu'" --system-file "$SYS/forced.c" -p amp=1,2,3 -p mu=1
bad "--system-lib not a system" "not a system compiled by hpc-odegen" --system-lib "$(ls "$top_builddir"/libhpc/.libs/libhpc-core.so* | head -n 1)"
bad "--system-lib missing" "cannot load it" --system-lib "$T/absent.so"
bad "two systems" "exclude each other" -s lorenz --system-file "$SYS/forced.c"
echo "odegen_sysfile: system files compile, cache, load and fail as they should"
