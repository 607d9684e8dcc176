#!/usr/bin/env bash
# bench/summary.sh: tf.summary.scalar inside a traced training step, per
# call (issue 20's target: under 2 us), and eagerly (bench/summary.lua).
# Usage: bash bench/summary.sh [N scalars per step, default 32]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
lua5.4 bench/summary.lua "${1:-32}" | tee "$out/summary.txt"
