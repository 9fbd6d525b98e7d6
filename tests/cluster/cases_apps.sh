# cases_apps.sh - hpc-matmul and hpc-train with their ranks on several
# nodes, and the per-node memory check (tests/cluster_box.sh).

# a 2 x 2 process grid over 2 nodes, --verify, and the product checked
# against an independent reference (tests/matmul_check)
case_matmul() {
    HPC_TIMEOUT=60 brun 120 -N2 -n4 "$(bprog matmul)" --gen 96,80,88 --seed 3 --grid 2x2 --nb 8 --verify \
        --save-inputs --out c.h5:/C > out 2>&1 || { cat out; fail "hpc-matmul -N2 -n4 --grid 2x2 --verify"; }
    grep -i 'verif' out || { cat out; fail "no --verify line"; }
    "$(bprog matmul_check)" c.h5:/A c.h5:/B c.h5:/C || fail "the product is wrong"
}

# hpc-train's stages on different nodes (--parallel pipe, one rank a
# node) and its parameters sharded across nodes (--shard params, 2 x 2):
# every step's loss within 1e-5 of the 1-rank run (the tests' bound)
case_train() {
    "$(bprog odegen)" -q -n 60 --nt 21 --out ode.h5 || fail "making the data"
    args="--data $PWD/ode.h5 --layers 11,32,32,32,10 --steps 40 --log-every 1 --batch 47 -q"
    train=$(bprog train)
    # shellcheck disable=SC2086
    "$train" $args --out np1 || fail "1 rank"
    HPC_TIMEOUT=60 brun 120 -N2 -n2 "$train" $args --parallel pipe --micro 5 --out pipe > out 2>&1 ||
        { cat out; fail "--parallel pipe across 2 nodes"; }
    close np1 pipe "--parallel pipe, a stage a node" 1e-5
    HPC_TIMEOUT=60 brun 120 -N2 -n4 "$train" $args --shard params --out params > out 2>&1 ||
        { cat out; fail "--shard params across 2 nodes"; }
    close np1 params "--shard params, 2 nodes x 2 ranks" 1e-5
}

# the memory check on every node: n3's processes are held to 384 MiB (a
# memory cgroup; n1 has the machine's memory): a product that needs
# 0.8 GiB a rank is refused before it allocates, in one line that names
# n3, not n1
case_mem() {
    brun 60 -w n1,n3 -N2 -n2 "$(bprog matmul)" --gen 8000,8000,8000 --grid 2x1 > out 2> err
    rc=$?
    cat err
    [ $rc = 1 ] || { cat out; fail "exit $rc, expected 1 (not enough memory on n3)"; }
    grep -q 'on this node (n3), but .* GiB is available there' err || fail "the refusal does not name n3"
    grep -q '(n1)' err && fail "the refusal names n1"
    [ "$(grep -c 'hpc-matmul' err)" = 1 ] || fail "not one line"
}
