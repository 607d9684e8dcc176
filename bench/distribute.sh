#!/usr/bin/env bash
# bench/distribute.sh [STEPS] [BATCH]: the MNIST convnet's training
# throughput with 1 and with 2 single-threaded workers (mpirun -np 1 / -np
# 2, LTF_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1), and the ratio (issue 21
# asks >= 1.8x on the 2-core machine). Each worker takes BATCH examples a
# step (default 64). One run of each; see bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
steps=${1:-30}
batch=${2:-64}
run() {
  mpirun --allow-run-as-root --oversubscribe -np "$1" -x LTF_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
    -x LUA_PATH_5_4 -x LUA_CPATH_5_4 lua5.4 bench/distribute.lua "$steps" "$batch"
}
one=$(run 1); echo "$one"
two=$(run 2); echo "$two"
awk -v a="$one" -v b="$two" 'BEGIN {
  split(a, x, ": "); split(b, y, ": "); ra = x[2] + 0; rb = y[2] + 0
  printf "2 workers / 1 worker: %.2fx (target >= 1.8x)\n", rb / ra }'
