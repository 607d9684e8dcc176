#!/usr/bin/env bash
# bench/sort_contraction.sh: the sorting and contraction figures (einsum,
# bmm, top_k, sort), luatf (bench/sort_contraction.lua) and its peers
# (bench/sort_contraction_peers.py: PyTorch, NumPy) in one run, on the same
# 2 threads; prints the ratios. The two
# scripts run alternately ROUNDS times (default 3) and each figure is the
# best of its rounds: the machine is shared, and a neighbour's job can
# double one side's time in a single round.
# Usage: bash bench/sort_contraction.sh   (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
out=""
for _ in $(seq "${ROUNDS:-3}"); do
  out="$out
$( (cd bench && lua5.4 sort_contraction.lua && /usr/bin/python3 sort_contraction_peers.py) )"
done
echo "$out" | grep RESULT
echo "$out" | awk '
  /^RESULT/ { x = $3 + 0; if (!($2 in v) || x < v[$2]) v[$2] = x }
  END {
    print "best of the rounds:"
    printf "einsum bij,bjk->bik (64,128,128) f32: %.3f ms, tf.matmul %.3f ms: %.2fx of matmul (target <= 1.2x); torch.einsum %.3f ms\n", v["einsum_ms"], v["bmm_ms"], v["einsum_ms"] / v["bmm_ms"], v["torch_einsum_ms"]
    printf "top_k k=10 (1000,10000) f32: %.3f ms, torch.topk %.3f ms: %.2fx faster (target >= 2x)\n", v["topk_ms"], v["torch_topk_ms"], v["torch_topk_ms"] / v["topk_ms"]
    printf "sort 1M f32: %.3f ms, numpy.sort %.3f ms: %.2fx of numpy (target <= 1.2x)\n", v["sort_ms"], v["numpy_sort_ms"], v["sort_ms"] / v["numpy_sort_ms"]
  }'
