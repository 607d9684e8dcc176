#!/usr/bin/env bash
# bench/allreduce.sh: luatf's all-reduce (tf.distribute.collective over
# tf/mpi.so) beside a bare MPI_Allreduce C program (bench/mpi_allreduce.c),
# both under `mpirun -np 2` in the same run, and the per-step overhead of
# the bucketed all-reduce for a 100-variable model (bench/allreduce.lua).
# Usage: bash bench/allreduce.sh [reps_1mb reps_100mb steps]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
r1=${1:-50} r100=${2:-7} steps=${3:-30}
mpicc -O2 bench/mpi_allreduce.c -o "$out/mpi_allreduce"
run() { OPENBLAS_NUM_THREADS=1 LTF_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe -np 2 "$@"; }
bare=$(run "$out/mpi_allreduce" "$r1" "$r100")
lua=$(run lua5.4 bench/allreduce.lua "$r1" "$r100" "$steps")
echo "$bare"; echo "$lua"
get() { echo "$bare"$'\n'"$lua" | awk -v k="$1" -v s="${2:-}" '$1 == k && (s == "" || $2 == s) { print (s == "" ? $2 : $3) }'; }
printf '\n| what (2 processes, float32 SUM) | luatf | bare MPI_Allreduce | luatf / bare throughput | target |\n|---|---|---|---|---|\n'
for b in 1048576 104857600; do
  l=$(get luatf_allreduce $b) c=$(get bare_allreduce $b)
  awk -v b=$b -v l=$l -v c=$c 'BEGIN { printf "| all_reduce %d MB | %.2f ms (%.0f MB/s) | %.2f ms (%.0f MB/s) | %.0f%% | >= 90%% |\n", b / 1048576, l * 1e3, b / l / 1e6, c * 1e3, b / c / 1e6, 100 * c / l }'
done
w=$(get step_with_allreduce) o=$(get step_without_allreduce) k=$(get bucket_calls) g=$(get gradient_bytes) c=$(get allreduce_call_aligned)
awk -v w=$w -v o=$o -v k=$k -v g=$g -v c=$c 'BEGIN { printf "\n| 100-variable model (%.0f KB of gradients), 2 workers, batch 128 each | time | share of the step |\n|---|---|---|\n| step without all-reduce | %.2f ms | |\n| step with the bucketed all-reduce (%d call%s) | %.2f ms | %.1f%% (all-reduce and waiting for the other worker) |\n| the bucketed all-reduce alone (workers aligned by a barrier) | %.2f ms | %.1f%% of (step + it) (target < 20%%) |\n", g / 1024, o * 1e3, k, k == 1 ? "" : "s", w * 1e3, 100 * (w - o) / w, c * 1e3, 100 * c / (o + c) }'
