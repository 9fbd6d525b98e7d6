#!/bin/sh
# device-check.sh - hpckit's GPU paths, all of them, once, on a GPU
# machine, with one table of pass/fail and figures at the end.
#
#   tests/device-check.sh BUILD        BUILD: a build tree (on a machine with
#                                      its MPI, HDF5, ... installed), or a
#                                      folder from tests/device-pack.sh
#                                      (a machine with only the driver)
#
# What it runs:
#   - that every program, library, module and test finds its libraries
#     (ldd; only the driver's libcuda.so.1 may be missing without a GPU)
#   - hpc-info: the GPU stack it found, the GPU bound to each rank
#   - every device test of make check: test_rng_cuda, coll_device and
#     coll_stream at 1 and 2 ranks, coll_registry (its device rows), gpu.sh,
#     odegen_cuda.sh (the built-ins and a --system-file through NVRTC,
#     RK45, RK23 and DOP853), train_cuda.sh, and the GPU logic's unit tests that
#     run anywhere (fake runtime statuses, NCCL's in-progress handling,
#     deferred frees, the legacy-stream gates, odegen's 64-bit layout);
#     with a GPU, a device test that skips is a failure
#   - hpc-info --selftest --device at 1 and 2 ranks
#   - hpc-collbench --mem cuda --check: NCCL and every own algorithm
#   - hpc-odegen --device cuda against the CPU (statistics equal, values
#     within 1e-12 relative or 1e-10 of their scale: tests/h5close)
#   - hpc-matmul --device cuda: one cuBLAS GEMM alone (1 rank, one panel)
#     and the distributed product (2 ranks), each against the CPU
#     reference within the rounding bound, and Freivalds' --verify
#   - hpc-train --device cuda against the CPU run (100 steps within 1e-4),
#     and the share of NCCL hidden behind backward on 2 ranks
# Without a GPU every step still runs as far as it can (each refuses with
# its one line, or skips) and the script ends with exit 77 ("no GPU");
# with one: 0 if every row passed, 1 if not.  DEVICE_CHECK_TIMEOUT (s,
# default 120) bounds each step and DEVICE_CHECK_BUDGET (s, default 420)
# the whole check: a step gets what is left of the budget at most, so a
# hang costs its step, never the slot (a 15-minute lease, start included).
# DEVICE_CHECK_LOGS=DIR keeps every step's output there (NN-name.out/.err).
set -u
[ $# = 1 ] || { echo "usage: device-check.sh BUILD (a build tree, or a folder of device-pack.sh)" >&2; exit 2; }
D=$(cd "$1" 2>/dev/null && pwd) || { echo "device-check.sh: no folder '$1'" >&2; exit 2; }
if [ -f "$D/pack.env" ]; then
    . "$D/pack.env"
    top_builddir=$D/build
    top_srcdir=$D/src
    # the build's own libraries first: never an older libhpc the pack or
    # the machine may hold
    export LD_LIBRARY_PATH="$D/build/libhpc/.libs:$D/build/libhpc/mpi/.libs:$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # the pack's programs need a C library no older than the one they were built with
    here_glibc=$(ldd --version 2>/dev/null | head -n 1 | sed 's/.* //')
    if [ -n "$PACK_GLIBC" ] && [ -n "$here_glibc" ] &&
       [ "$(printf '%s\n%s\n' "$PACK_GLIBC" "$here_glibc" | sort -V | head -n 1)" != "$PACK_GLIBC" ]; then
        echo "device-check.sh: this machine's C library ($here_glibc) is older than the pack's ($PACK_GLIBC): build the pack on a machine no newer than this one" >&2
        exit 2
    fi
    PATH=$D/bin:$PATH
    flavor=$PACK_MPI_FLAVOR
    H5DUMP=$(command -v h5dump || true)
    if [ -x "$D/bin/mpiexec" ]; then launcher="$D/bin/mpiexec -n NP"; else launcher="mpiexec -n NP"; fi
    where="the pack $D (from $PACK_FROM_BUILD, glibc $PACK_GLIBC)"
else
    [ -f "$D/Makefile" ] || { echo "device-check.sh: $D is neither a build tree nor a pack" >&2; exit 2; }
    mkv() { sed -n "s/^$1 = //p" "$D/Makefile" | head -n 1; }
    top_builddir=$D
    top_srcdir=$(cd "$D" && cd "$(mkv srcdir)" && pwd)
    flavor=$(mkv HPC_MPI_FLAVOR)
    H5DUMP=$(mkv H5DUMP)
    launcher=$(mkv TESTMPIEXEC)
    where="the build tree $D"
fi
[ -x "$top_builddir/apps/info/hpc-info" ] || { echo "device-check.sh: no hpc-info in $top_builddir" >&2; exit 2; }
B=$top_builddir
HAVE_CUDA_BUILD=$(sed -n 's/^hpc_have_cuda = //p' "$B/Makefile" | head -n 1)
HDF5_LIBS=$(sed -n 's/^HDF5_LIBS = //p' "$B/Makefile" | head -n 1)
PYTHON_SCI=$(command -v python3 || true)
GNUPLOT= HELP2MAN= MPIEXEC=
HPC_MPI_FLAVOR=$flavor
W=$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX") || exit 99
trap 'rm -rf "$W"' EXIT
# the launcher, as tests/mpiexec-wrap runs it, from here
cat > "$W/mpiexec-wrap" <<EOF
#!/bin/sh
if [ "\$1" = "-n" ]; then np=\$2; prog=\$3; shift 3; else base=\${1%.mpi}; np=\${base##*-np}; prog=\${base%-np*}; shift; fi
if [ "$flavor" = openmpi ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi
exec timeout -k 10 "\${HPC_TEST_TIMEOUT:-300}" $(echo "$launcher" | sed 's/NP/$np/') "\$prog" "\$@"
EOF
chmod +x "$W/mpiexec-wrap"
MPIEXEC_WRAP=$W/mpiexec-wrap
# as the test harness: a clean environment, then what the tests read
. "$top_srcdir/tests/testenv.sh"
HPC_MODULE_DIR=$B/libhpc/.libs/hpckit
export top_srcdir top_builddir MPIEXEC_WRAP PYTHON_SCI H5DUMP GNUPLOT HPC_MPI_FLAVOR MPIEXEC HELP2MAN \
    HPC_MODULE_DIR HAVE_CUDA_BUILD HDF5_LIBS PATH
TMO=${DEVICE_CHECK_TIMEOUT:-120}
BUDGET=${DEVICE_CHECK_BUDGET:-420}
LOGS=${DEVICE_CHECK_LOGS:-}
[ -z "$LOGS" ] || mkdir -p "$LOGS" || exit 2
t_start=$(date +%s)
nstep=0

# the GPUs this process may use: nvidia-smi's list (a container on a GPU
# host lists only its own, where /proc/driver/nvidia/gpus lists the
# host's), else, without nvidia-smi, whether hpc-info's rank got one
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if ! command -v nvidia-smi > /dev/null 2>&1; then
    ngpu=$("$top_builddir/apps/info/hpc-info" 2>/dev/null | awk '$1 == "0" && $NF != "none" { n = 1 } END { print n + 0 }')
fi
echo "device-check: $where; $ngpu GPU(s)$( [ "$ngpu" -ge 1 ] && nvidia-smi -L 2>/dev/null | head -n 1 | sed 's/^/: /')"
[ "$HAVE_CUDA_BUILD" = yes ] || echo "device-check: note: this build has no CUDA (configure found no nvcc): every GPU step refuses"

# ---- the table ------------------------------------------------------ #
: > "$W/table"
nfail=0 npass=0
row() {   # row NAME RESULT FIGURES
    printf '%-40s %-8s %s\n' "$1" "$2" "$3" >> "$W/table"
    case $2 in FAIL) nfail=$((nfail + 1)) ;; pass) npass=$((npass + 1)) ;; esac
    printf '[%s] %-40s %-8s %s\n' "$(date +%T)" "$1" "$2" "$3"
}
# classify RC: pass / skip (77) / no-GPU (a device request refused with
# exit 2, as it must be without one) / FAIL; $W/err holds the stderr
verdict() {
    if [ "$1" = 0 ]; then echo pass
    elif [ "$1" = 77 ]; then echo skip
    elif [ "$ngpu" = 0 ] && [ "$1" = 2 ] && grep -q -e 'no NVIDIA driver' -e 'no CUDA device' -e 'cannot be loaded' \
             -e 'needs a newer NVIDIA driver' -e 'was built without it' "$W/err"; then echo no-GPU
    else echo FAIL
    fi
}
run() {   # run NAME CMD...: a step, its output in $W/out and $W/err
    name=$1
    shift
    left=$((BUDGET - ($(date +%s) - t_start)))
    step_t=$TMO
    [ "$left" -lt "$step_t" ] && step_t=$left
    if [ "$step_t" -lt 5 ]; then
        echo "device-check: the budget of $BUDGET s is spent: $name not run" > "$W/err"; : > "$W/out"
        return 124
    fi
    HPC_TEST_TIMEOUT=$step_t timeout -k 5 "$step_t" "$@" > "$W/out" 2> "$W/err"
    step_rc=$?
    nstep=$((nstep + 1))
    if [ -n "$LOGS" ]; then
        f=$LOGS/$(printf '%02d' $nstep)-$(echo "$name" | tr -c 'A-Za-z0-9._\n-' '_')
        { echo "# $*"; echo "# exit $step_rc"; cat "$W/out"; } > "$f.out"; cp "$W/err" "$f.err"
    fi
    return $step_rc
}
# the one line a program refuses with, else the last one that says anything
# (not a launcher's banner of dashes)
why() {
    { grep -h -m1 '^hpc-[a-z]*: ' "$W/err" "$W/out" 2>/dev/null ||
      cat "$W/err" "$W/out" 2>/dev/null | grep -v '^[[:space:]-]*$' | tail -n 1; } | head -n 1 | cut -c1-90
}

# ---- 1. every ELF file finds its libraries --------------------------- #
missing=
for f in $(find "$B" -type f \( -perm -u+x -o -name '*.so*' \) 2>/dev/null); do
    [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    m=$(ldd "$f" 2>/dev/null | grep 'not found' | grep -v 'libcuda\.so\.1\|libhpc' | sed 's/=>.*//' | tr -d '[:space:]')
    [ -n "$m" ] && missing="$missing $(basename "$f"):$m"
done
if [ -z "$missing" ]; then row "libraries found (ldd)" pass "every program, library, module, test"
else row "libraries found (ldd)" FAIL "missing:$(echo "$missing" | cut -c1-200)"; fi

# ---- 2. hpc-info ----------------------------------------------------- #
run info "$B/apps/info/hpc-info"
rc=$?
stack=$(sed -n 's/^GPU stack: //p' "$W/out")
gpus=$(awk '$1 ~ /^[0-9]+$/ { print $NF == "none" ? "none" : $6 }' "$W/out" | tr '\n' ' ')
if [ $rc != 0 ]; then row "hpc-info" FAIL "$(why)"
elif [ "$ngpu" -ge 1 ] && ! grep -q '(CUDA yes, NCCL yes' "$W/out"; then row "hpc-info" FAIL "GPU present, but: $stack"
elif [ "$ngpu" -ge 1 ] && awk '$1 ~ /^[0-9]+$/ && $NF == "none" { n++ } END { exit !n }' "$W/out"; then
    row "hpc-info" FAIL "GPU present, rank bound to none"
else row "hpc-info" pass "$stack"; fi
# the CUDA runtime the build loads against what the driver supports: a
# runtime newer than the driver fails every device step, so stop here
rt=$(echo "$stack" | sed -n 's/^CUDA runtime \([0-9.]*\),.*/\1/p')
drv=$(echo "$stack" | sed -n 's/.*, driver \([0-9.]*\).*/\1/p')
if [ "$ngpu" -ge 1 ] && [ -n "$rt" ] && [ -n "$drv" ] &&
   [ "$(printf '%s\n%s\n' "$rt" "$drv" | sort -V | head -n 1)" != "$rt" ]; then
    echo "device-check.sh: the CUDA runtime $rt needs a newer driver than this machine's (CUDA $drv, nvidia-smi driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)): pack the machine's own runtime (device-pack.sh --no-cuda-libs) or update the driver" >&2
    exit 2
fi

# ---- 3. the device tests of make check ------------------------------- #
for t in tests/test_gpu_status tests/coll_nccl_stub-np1.mpi tests/coll_nccl_stub-np2.mpi tests/coll_devfree-np1.mpi \
         tests/coll_gate-np2.mpi tests/odegen_layout tests/test_rng_cuda tests/coll_device-np1.mpi \
         tests/coll_device-np2.mpi tests/coll_stream-np1.mpi tests/coll_stream-np2.mpi tests/coll_registry-np3.mpi \
         tests/gpu_lazyctx-np1.mpi tests/gpu_lazyctx-np2.mpi tests/coll_lazyctx-np1.mpi \
         tests/gpu.sh tests/odegen_cuda.sh tests/train_cuda.sh; do
    # (its host rows are make check's: here only its device rows count)
    [ "$t" = tests/coll_registry-np3.mpi ] && [ "$ngpu" = 0 ] && { row "$t" skip "no GPU: its device rows need one"; continue; }
    case $t in
    *.mpi) prog=${t%-np*}; [ -x "$B/$prog" ] || { row "$t" FAIL "not built"; continue; }
           ( cd "$B" && run "$t" "$MPIEXEC_WRAP" "$t" ) ;;
    *.sh)  run "$t" sh "$top_srcdir/$t" ;;
    *)     [ -x "$B/$t" ] || { row "$t" FAIL "not built"; continue; }
           run "$t" "$B/$t" ;;
    esac
    rc=$?
    v=$(verdict $rc)
    [ "$v" = skip ] && [ "$ngpu" -ge 1 ] && [ "$HAVE_CUDA_BUILD" = yes ] && case $t in
        tests/test_gpu_status|tests/coll_nccl_stub*|tests/coll_devfree*|tests/coll_gate*|tests/odegen_layout|tests/coll_lazyctx*) ;;
        *) v=FAIL ;;   # a GPU is there: a device test that skips has failed to see it
        esac
    row "$t" "$v" "$( [ "$v" = pass ] && tail -n 1 "$W/out" | cut -c1-90 || why)"
done

# ---- 4. hpc-info --selftest --device at 1 and 2 ranks ----------------- #
for np in 1 2; do
    run "selftest --device np$np" "$MPIEXEC_WRAP" -n $np "$B/apps/info/hpc-info" --selftest --device
    v=$(verdict $?)
    row "hpc-info --selftest --device np$np" "$v" "$( [ "$v" = pass ] && sed -n 's/^selftest: //p' "$W/out" | tail -n 1 || why)"
done

# ---- 5. hpc-collbench --mem cuda --check ------------------------------ #
# 1 rank: NCCL and every own algorithm; 2 ranks: the same where there are
# two GPUs (NCCL needs one per rank), own algorithms only on one GPU
# (allreduce's algorithms, from the line that refuses one it lacks)
all=$("$B/apps/collbench/hpc-collbench" -c allreduce -a bruck 2>&1 | sed -n 's/.*(it has \(.*\)).*/\1/p' | tr -d ' ')
own=$(echo "$all" | tr ',' '\n' | grep -v '^nccl$' | tr '\n' ',' | sed 's/,$//')
for np in 1 2; do
    algs=
    [ $np = 2 ] && [ "$ngpu" -lt 2 ] && [ -n "$own" ] && algs="-a $own"
    run "collbench np$np" "$MPIEXEC_WRAP" -n $np "$B/apps/collbench/hpc-collbench" --mem cuda --check \
        -c allreduce -b 8 -e 64M -f 8 -n 5 $algs
    v=$(verdict $?)
    if [ "$v" = pass ] && ! grep -q 'all results checked' "$W/out"; then v=FAIL; fi
    row "hpc-collbench --mem cuda np$np" "$v" "$( [ "$v" = pass ] && sed -n 's/^# summary: //p' "$W/out" | cut -c1-90 || why)"
done

# ---- 6. hpc-odegen --device cuda against the CPU ----------------------- #
H5DIFF=$(command -v h5diff || true)
[ -n "$H5DUMP" ] && [ -x "$(dirname "$H5DUMP")/h5diff" ] && H5DIFF=$(dirname "$H5DUMP")/h5diff
og="$MPIEXEC_WRAP -n 1 $B/apps/odegen/hpc-odegen"
run "odegen cpu" $og -n 20000 --out "$W/ode-cpu.h5" || row "hpc-odegen cpu (the reference)" FAIL "$(why)"
rate_cpu=$(grep -o '[0-9.]* traj/s' "$W/err" "$W/out" | head -n 1 | sed 's/^[^:]*://')
run "odegen cuda" $og -n 20000 --device cuda --out "$W/ode-gpu.h5"
v=$(verdict $?)
if [ "$v" = pass ]; then
    rate_gpu=$(grep -o '[0-9.]* traj/s' "$W/err" "$W/out" | head -n 1 | sed 's/^[^:]*://')
    bad=
    for d in /t /x0 /stats/nsteps /stats/nfev /stats/nrejected /stats/status; do
        "$B/tests/h5close" "$W/ode-cpu.h5" "$W/ode-gpu.h5" $d 0 0 > "$W/diff" 2>&1 || { v=FAIL; bad="$bad $d"; }
    done
    # the bound of tests/odegen_cuda.sh: 1e-12 relative, or of the scale
    "$B/tests/h5close" "$W/ode-cpu.h5" "$W/ode-gpu.h5" /y 1e-12 1e-10 > "$W/diff" 2>&1 || { v=FAIL; bad="$bad /y"; }
    ydiff=$(sed -n 's/.*worst \([^ ]*\) relative, \([^ ]*\) of the scale.*/\/y worst \1 rel, \2 of scale/p' "$W/diff")
    [ -n "$bad" ] && rate_gpu="differ:$bad"
    rate_gpu="$rate_gpu; $ydiff"
    row "hpc-odegen cuda = cpu" "$v" "cuda $rate_gpu, cpu $rate_cpu"
else
    row "hpc-odegen cuda = cpu" "$v" "$(why)"
fi

# ---- 7. hpc-matmul --device cuda: cuBLAS alone, then distributed ------- #
mnk=3000,2500,2000
# two ranks on one GPU share it (--share-gpu), as a user with one GPU would
share=
[ "$ngpu" -lt 2 ] && share=--share-gpu
for c in "cuBLAS alone, 1 rank:1:--nb 2000" "distributed, 2 ranks:2:--nb 256 $share"; do
    what=${c%%:*} rest=${c#*:}
    np=${rest%%:*} extra=${rest#*:}
    run "matmul $what" "$MPIEXEC_WRAP" -n "$np" "$B/apps/matmul/hpc-matmul" --gen $mnk --seed 5 --device cuda --verify $extra --out "$W/mm$np.h5:/C" --save-inputs --force
    v=$(verdict $?)
    fig=$(grep -o '[0-9.]* GFLOP/s.*verify [a-z]*' "$W/out" "$W/err" 2>/dev/null | head -n 1 | sed 's/^[^:]*://' | cut -c1-60)
    if [ "$v" = pass ]; then
        "$B/tests/matmul_check" "$W/mm$np.h5:/A" "$W/mm$np.h5:/B" "$W/mm$np.h5:/C" > "$W/check" 2>&1 ||
            { v=FAIL; fig="against the CPU reference: $(cat "$W/check")"; }
        fig="$fig; $(cut -c1-40 "$W/check")"
    else
        fig=$(why)
    fi
    row "hpc-matmul cuda ($what)" "$v" "$fig"
done
# ranks that share a GPU are told by its PCI bus id, not its index (under
# Slurm's --gpus-per-task=1 every task's GPU is index 0): on one GPU,
# without --share-gpu, refused with the bus id; on two, no refusal
if [ "$ngpu" -ge 1 ]; then
    run "matmul shared GPU" "$MPIEXEC_WRAP" -n 2 "$B/apps/matmul/hpc-matmul" --gen 64,64,64 --device cuda
    rc=$?
    if [ "$ngpu" -lt 2 ]; then
        if [ $rc != 0 ] && grep -q "shares GPU [0-9a-fA-F]*:" "$W/err"; then row "hpc-matmul: shared GPU refused" pass "$(why)"
        else row "hpc-matmul: shared GPU refused" FAIL "exit $rc: $(why)"; fi
    else
        if [ $rc = 0 ]; then row "hpc-matmul: one GPU a rank" pass "2 ranks, 2 GPUs, no refusal"
        else row "hpc-matmul: one GPU a rank" FAIL "$(why)"; fi
    fi
fi
if [ -f "$W/mm1.h5" ] && [ -f "$W/mm2.h5" ] && [ -n "$H5DIFF" ]; then
    if "$H5DIFF" -q "$W/mm1.h5" "$W/mm2.h5" /C /C > /dev/null 2>&1; then same="bit-identical"; else same="within the bound, not bit-identical"; fi
    row "hpc-matmul: 2 ranks vs cuBLAS alone" pass "$same"
fi

# ---- 8. hpc-train --device cuda against the CPU; the overlap ---------- #
run "train data" "$MPIEXEC_WRAP" -n 1 "$B/apps/odegen/hpc-odegen" -q -n 400 --nt 11 --out "$W/tr.h5" ||
    row "hpc-odegen cpu (training data)" FAIL "$(why)"
targs="--data $W/tr.h5 --layers 11,256,256,10 --batch 64 --steps 100 --log-every 1 --bucket-mb 0.05 -q"
run "train cpu" "$MPIEXEC_WRAP" -n 1 "$B/apps/train/hpc-train" $targs --out "$W/tcpu" ||
    row "hpc-train cpu (the reference)" FAIL "$(why)"
run "train cuda" "$MPIEXEC_WRAP" -n 1 "$B/apps/train/hpc-train" $targs --device cuda --out "$W/tgpu"
v=$(verdict $?)
if [ "$v" = pass ]; then
    worst=$(paste -d, "$W/tcpu/metrics.csv" "$W/tgpu/metrics.csv" | awk -F, 'NR > 1 && $4 != "" {
        n = NF / 2; d = $4 - $(n + 4); d = d < 0 ? -d : d; r = d / ($4 < 0 ? -$4 : $4); if (r > w) w = r } END { print w + 0 }')
    awk -v w="$worst" 'BEGIN { exit !(w <= 1e-4) }' || v=FAIL
    row "hpc-train cuda = cpu (100 steps)" "$v" "worst loss difference $worst relative (bound 1e-4)"
else
    row "hpc-train cuda = cpu (100 steps)" "$v" "$(why)"
fi
# 2 ranks: NCCL where each rank has a GPU of its own; on one GPU NCCL
# refuses the shared device and auto says once what runs instead - the
# row names what ran, from that line (never "NCCL" where NCCL did not)
np=2
run "train cuda np2" "$MPIEXEC_WRAP" -n $np "$B/apps/train/hpc-train" $(echo "$targs" | sed 's/ -q//') --device cuda \
    --steps 300 --out "$W/tgpu2"
v=$(verdict $?)
if grep -q "auto: nccl: .*own algorithms" "$W/err"; then ran="hpckit's own (NCCL refused: shared GPU)"; else ran=NCCL; fi
[ "$v" = pass ] && [ "$ngpu" -ge 2 ] && [ "$ran" != NCCL ] && v=FAIL
[ "$v" = pass ] && [ "$ngpu" -lt 2 ] && [ "$ran" = NCCL ] && { v=FAIL; ran="NCCL on one shared GPU?"; }
row "hpc-train cuda np2: comm hidden" "$v" "$( [ "$v" = pass ] && echo "$ran: $(grep -o 'communication [^;]*' "$W/out" "$W/err" | head -n 1 | sed 's/^[^:]*://')" || echo "$ran; $(why)")"

# cuBLAS and the CUDA runtime found through the modules' own RUNPATH, with
# the loader's cache and every CUDA folder out of the library path (an
# install where CUDA's folder is not in ld.so.conf): issue 34.5
ldso=$(readelf -l "$B/apps/train/.libs/hpc-train" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
nocuda=$(echo "$LD_LIBRARY_PATH" | tr ':' '\n' | grep -v -e cuda -e '^$' | tr '\n' ':')
if [ -x "$ldso" ] && "$ldso" --help 2>/dev/null | grep -q -e --inhibit-cache; then
    run "train cuda, CUDA by RUNPATH" "$MPIEXEC_WRAP" -n 1 "$ldso" --inhibit-cache --library-path "$nocuda" \
        "$B/apps/train/.libs/hpc-train" $targs --steps 5 --device cuda --out "$W/trp"
    v=$(verdict $?)
    row "hpc-train cuda, CUDA libs by RUNPATH" "$v" "$( [ "$v" = pass ] && echo "no CUDA folder on the library path, no cache" || why)"
else
    row "hpc-train cuda, CUDA libs by RUNPATH" skip "the loader has no --inhibit-cache"
fi

# ---- the table ------------------------------------------------------- #
echo
echo "device-check: $where"
echo "GPU stack: ${stack:-?}"
printf '%-40s %-8s %s\n' check result figures
cat "$W/table"
if [ "$nfail" -gt 0 ]; then echo "device-check: $nfail FAILED, $npass passed"; exit 1; fi
if [ "$ngpu" -lt 1 ]; then
    echo "device-check: no GPU here: every step ran as far as it can without one (exit 77)"
    exit 77
fi
echo "device-check: all $npass passed"
