#!/bin/bash
# bench.sh - the collectives on a cluster in a box, measured against the
# MPI library's own and against the cost model's predictions (a benchmark,
# not a test: run it as root on a quiet machine; its figures on a loaded
# one are noise).
#
#   tests/cluster/bench.sh BUILD [OUTDIR]
#
# BUILD is a build tree (_build/mpich or _build/openmpi).  For every link
# (SHAPES: unshaped, and an HTB limit of 1 Gbit/s on every node's link),
# node count (NODES) and ranks per node (PPN) it runs, on one cluster of
# the largest node count:
#   1. hpc-collbench --tune: the cost model's constants measured on this
#      network (ping-pong between nodes: alpha_inter, beta_inter) and the
#      fastest algorithm per size, rows keyed by nodes and ranks per node;
#   2. hpc-collbench for allreduce, bcast and allgather (COLLS), every
#      algorithm, auto and native, 8 B to MAX, with that tuning file in
#      effect (so auto uses the rows --tune wrote for this node count);
#   3. hpc-collbench --simulate of the same runs, with the measured
#      constants (the tuning file);
#   4. hpc-train data parallel at 2 nodes x 1 and x 2 ranks and on one
#      node (TRAIN=0 skips it): samples/s and the share of communication
#      hidden behind backward.
# Then it prints, per configuration and collective, a Markdown table: size,
# native, the best own algorithm, auto (and whether it is within 10% of the
# best), hier against the best flat algorithm, the simulator's prediction
# for the fastest algorithm and its error; the largest simulator error over
# every algorithm from 64 KiB up on
# the shaped link; and the training table.  CSVs stay in OUTDIR.
#
# Smoke run (tiny sizes, a minute): NODES=2 PPN=1 SHAPES="none 1gbit" MAX=128K ITERS=3 COLLS=allreduce \
#   TRAIN_N=2000 TRAIN_STEPS=20 tests/cluster/bench.sh _build/mpich
# The figures (docs/cluster.md): tests/cluster/bench.sh _build/mpich
set -u
build=$(cd "${1:?usage: bench.sh BUILD [OUTDIR]}" && pwd) || exit 2
out=${2:-$PWD/cluster-bench-$(date +%Y%m%d-%H%M%S)}
here=$(cd "$(dirname "$0")" && pwd)
NODES=${NODES:-2 3 4} PPN=${PPN:-1 2} SHAPES=${SHAPES:-none 1gbit} COLLS=${COLLS:-allreduce bcast allgather}
MAX=${MAX:-64M} ITERS=${ITERS:-10} TRAIN=${TRAIN:-1} ID=${HPCK_CLUSTER_ID:-8}
mkdir -p "$out" || exit 1
if ldd "$build/apps/collbench/.libs/hpc-collbench" 2>/dev/null | grep -q 'libmpi\.so'; then mpi=pmix; else mpi=pmi2; fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# the nodes share this machine's cores: waiting ranks yield them (with more
# ranks than cores, the figures measure the scheduler - keep N x PPN at or
# under the cores)
export HPC_COLL_YIELD=1
maxn=$(echo "$NODES" | tr ' ' '\n' | sort -n | tail -1)
maxp=$(echo "$PPN" | tr ' ' '\n' | sort -n | tail -1)
"$here/cluster.sh" start -i "$ID" -n "$maxn" --cpus $((maxp > 2 ? maxp : 2)) || exit $?
trap '"$here/cluster.sh" stop -i "$ID"' EXIT
export SLURM_CONF=/tmp/hpckit-cluster$ID/slurm.conf
bench=$build/apps/collbench/hpc-collbench

for shape in $SHAPES; do
    if [ "$shape" = none ]; then "$here/cluster.sh" shape -i "$ID" off; else "$here/cluster.sh" shape -i "$ID" "$shape" || exit 1; fi
    for n in $NODES; do
        for p in $PPN; do
            tag=$shape-${n}x$p
            run="srun --mpi=$mpi -N$n --ntasks-per-node=$p"
            echo "== $tag: --tune"
            $run "$bench" -q --tune "$out/$tag.tune" -c allreduce -b 8 -e "$MAX" -n "$ITERS" -w 2 || exit 1
            for c in $COLLS; do
                echo "== $tag: $c"
                # every algorithm of c but nccl (its --help lists them), and auto
                algs=$("$bench" --help | awk -v c="$c" '$1 == c && $2 == "native," { for (i = 2; i <= NF; i++) { a = $i; sub(",", "", a)
                       if (a != "nccl") { printf "%s%s", s, a; s = "," } } }'),auto
                HPC_COLL_TUNING=$out/$tag.tune $run "$bench" -q -c "$c" -a "$algs" -b 8 -e "$MAX" -n "$ITERS" -w 2 \
                    --csv "$out/$tag-$c.csv" || exit 1
                HPC_COLL_TUNING=$out/$tag.tune "$bench" -q --simulate --ranks $((n * p)) --nodes "$n" -c "$c" -a "$algs" \
                    -b 8 -e "$MAX" --csv "$out/$tag-$c.sim.csv" || exit 1
            done
        done
    done
done

if [ "$TRAIN" = 1 ]; then
    "$here/cluster.sh" shape -i "$ID" off
    "$build/apps/odegen/hpc-odegen" -q -s lorenz -n "${TRAIN_N:-20000}" --nt 21 --out "$out/ode.h5" || exit 1
    targs="--data $out/ode.h5 --layers 4,256,256,256,3 --batch 256 --steps ${TRAIN_STEPS:-300}"
    for shape in 1x1 1x2 2x1 2x2; do
        srun --mpi=$mpi -N"${shape%x*}" --ntasks-per-node="${shape#*x}" "$build/apps/train/hpc-train" $targs \
            --out "$out/train-$shape" --force 2>&1 | tail -1 | sed "s/^/$shape: /" | tee -a "$out/train.txt"
    done
fi

"${PYTHON:-python3}" - "$out" "$SHAPES" "$NODES" "$PPN" "$COLLS" <<'PY'
import csv, os, sys
out, shapes, nodes, ppn, colls = sys.argv[1], *[a.split() for a in sys.argv[2:6]]

def rows(path):
    t = {}
    if not os.path.exists(path): return t
    for r in csv.DictReader(l for l in open(path) if not l.startswith("#")):
        t.setdefault(int(r["size_bytes"]), {})[r["alg"]] = float(r["time_us"])
    return t

worst = {}
for shape in shapes:
    for n in nodes:
        for p in ppn:
            for c in colls:
                tag = f"{shape}-{n}x{p}"
                m, s = rows(f"{out}/{tag}-{c}.csv"), rows(f"{out}/{tag}-{c}.sim.csv")
                if not m: continue
                print(f"\n### {c}, {n} nodes x {p} ranks, link {shape}\n")
                print("| size | native us | best own us | auto us | auto/best | hier/best flat | sim of best us | sim err |")
                print("|---:|---:|---|---:|---:|---:|---:|---:|")
                for size in sorted(m):
                    t = m[size]
                    own = {a: v for a, v in t.items() if a not in ("native", "auto")}
                    best_a = min(own, key=own.get)
                    best = min(own[best_a], t.get("native", 1e99))
                    flat = {a: v for a, v in own.items() if a not in ("hier", "shm")}
                    hier = f"{t['hier'] / min(flat.values()):.2f}" if "hier" in t and flat else "-"
                    auto = t.get("auto")
                    ok = "" if auto is None or auto <= 1.1 * best else " (>10%)"
                    # the simulator (no auto, no native there): its time for the
                    # algorithm measured fastest; the worst error over every
                    # algorithm from 64 KiB up on a shaped link
                    sim = s.get(size, {}).get(best_a)
                    err = (sim - own[best_a]) / own[best_a] if sim else None
                    for a, v in own.items():
                        sa = s.get(size, {}).get(a)
                        if sa and size >= 65536 and shape != "none":
                            worst[tag + " " + c] = max(worst.get(tag + " " + c, 0), abs(sa - v) / v)
                    print(f"| {size} | {t.get('native', float('nan')):.1f} | {best_a} {own[best_a]:.1f} | "
                          f"{auto if auto is not None else float('nan'):.1f} | "
                          f"{(auto / best if auto else float('nan')):.2f}{ok} | {hier} | "
                          f"{sim if sim else float('nan'):.1f} | {'' if err is None else f'{100 * err:+.0f}%'} |")
if worst:
    print("\nThe simulator's largest error over every algorithm from 64 KiB up, shaped link (goal: within 25%):")
    for k, v in sorted(worst.items()):
        print(f"  {k}: {100 * v:.0f}%{'' if v <= 0.25 else '  (beyond 25%)'}")
t = f"{out}/train.txt"
if os.path.exists(t):
    print("\nhpc-train data parallel (nodes x ranks: the summary line):")
    print(open(t).read())
PY
