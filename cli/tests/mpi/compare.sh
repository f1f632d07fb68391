#!/usr/bin/env bash
# Runs split over MPI processes print what one process prints, byte for byte: stdout, the
# JSON and the [STRACE] lines, for `mpirun -np 2` and oversubscribed `-np 3` and `-np 4`, on two-node
# (every collective and algorithm, with data checked) and on the 1024-rank cluster
# (timing-only), and a user's collective (the guide's my_allgather, through `main_for`); the
# protocol checker's findings and traces the same. A refused option fails on every process,
# with no hang. Usage: compare.sh path/to/ranksim
# path/to/my_allgather (both built with ranksim-cli's `mpi` feature).
set -euo pipefail
bin=$(realpath "$1")
user=$(realpath "$2")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mpi=(mpirun --allow-run-as-root --oversubscribe)

# Runs `ranksim sweep ARGS` as process count $1 (0: without mpirun) into $dir/$2.*.
run() {
    local n=$1 name=$2
    shift 2
    local args=(sweep "$@" --json "$dir/$name.json" --strace "$dir/$name.strace")
    if [ "$n" = 0 ]; then
        "$bin" "${args[@]}" >"$dir/$name.out"
    else
        timeout 600 "${mpi[@]}" -np "$n" "$bin" "${args[@]}" >"$dir/$name.out"
    fi
}

# Runs `$runner N npN ARGS` (run or traced) for -np 2, 3 and 4 and compares each's files
# (the extensions in $files, said in words as $said) with those of the run into $dir/one.*.
same_on_np() {
    local runner=$1 what=$2 files=$3 said=$4
    shift 4
    for n in 2 3 4; do
        "$runner" "$n" "np$n" "$@"
        for f in $files; do
            cmp "$dir/one.$f" "$dir/np$n.$f" || { echo "FAIL: $what, -np $n: $f differs"; exit 1; }
        done
        echo "ok: $what, mpirun -np $n: $said byte-identical"
    done
}

check() {
    local what=$1
    shift
    run 0 one "$@"
    same_on_np run "$what" "out json strace" "stdout, JSON and STRACE" "$@"
}

check "two-node, every collective with data" --config two-node --collective all \
    --mode mesh,ring,two-shot,aiv-mesh,sdma-mesh,rhd,hier,grouped-mesh -b 64K -e 128K
grep -q "Out of bounds values : 0 OK" "$dir/np4.out"
check "cluster1024 timing-only" --config cluster1024 --no-data --mode rhd,hier -b 256K -e 256K
ranksim=$bin
bin=$user
check "my_allgather (a user's collective) on two-node" --config two-node -b 64K -e 256K
bin=$ranksim

# Under the checker and the tracer: `ranksim check` on broken protocols across both servers
# (findings as text and JSON, the unperturbed run's trace with its findings marked; exit 1 on
# every count, for the findings), and a traced sweep.
# Runs ranksim ARGS as process count $1 (0: without mpirun), trace file $dir/t.json, into
# $dir/$2.{out,code,trace}.
traced() {
    local n=$1 name=$2
    shift 2
    rm -f "$dir/t.json"
    set +e
    if [ "$n" = 0 ]; then
        "$bin" "$@" --trace "$dir/t.json" >"$dir/$name.out"
    else
        timeout 600 "${mpi[@]}" -np "$n" "$bin" "$@" --trace "$dir/t.json" >"$dir/$name.out"
    fi
    echo $? >"$dir/$name.code"
    set -e
    cp "$dir/t.json" "$dir/$name.trace" 2>/dev/null || : >"$dir/$name.trace"
}

compare_traced() {
    local what=$1
    shift
    traced 0 one "$@"
    [ -s "$dir/one.trace" ] || { echo "FAIL: $what wrote no trace"; exit 1; }
    same_on_np traced "$what" "out code trace" "stdout, exit code and trace" "$@"
}

for prog in broken-concurrent-set broken-missing-barrier broken-duplicate-notify; do
    compare_traced "check $prog on two-node" check --config two-node --program "$prog" --seeds 1 --json "$dir/f.json"
    grep -q "^FOUND" "$dir/np4.out" && [ "$(cat "$dir/np4.code")" = 1 ] || { echo "FAIL: $prog found nothing"; exit 1; }
done
bin=$user
compare_traced "check of my_allgather (a user's collective) on two-node" check --config two-node --seeds 1 \
    --json "$dir/f.json"
grep -q "^clean" "$dir/np4.out" || { echo "FAIL: my_allgather's check"; cat "$dir/np4.out"; exit 1; }
bin=$ranksim
compare_traced "traced sweep, all_to_all sdma-mesh on two-node" sweep --config two-node --collective all_to_all \
    --mode sdma-mesh -b 64K -e 64K

# An option the split refuses ends every process with the reason, exit 2 (a usage error),
# and no hang.
set +e
timeout 300 "${mpi[@]}" -np 2 "$bin" sweep --config two-node -b 1K -e 1K --partitions 3 >"$dir/refused.out" 2>&1
code=$?
set -e
[ "$code" = 2 ] || { echo "FAIL: a refused split run exited $code"; cat "$dir/refused.out"; exit 1; }
grep -q "one partition per process (2); leave it out" "$dir/refused.out" || { echo "FAIL: no reason"; exit 1; }
echo "ok: a refused option ends every process with its reason (exit 2)"
