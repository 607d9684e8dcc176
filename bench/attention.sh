#!/usr/bin/env bash
# bench/attention.sh: issue 19's MultiHeadAttention figure in one run:
# luatf (bench/attention.lua) beside torch.nn.MultiheadAttention
# (bench/attention_peers.py at 1 and at 2 threads, the faster taken), batch
# 16, 64 tokens, 4 heads, width 128, forward + backward. The scripts run
# alternately ROUNDS times (default 3) and each figure is the best of its
# rounds (the machine is shared). Prints a table; the target is luatf at
# least as fast as PyTorch.
# Usage: bash bench/attention.sh   (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
out=""
for _ in $(seq "${ROUNDS:-3}"); do
  out="$out
$(lua5.4 bench/attention.lua)
$(for t in 1 2; do OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/attention_peers.py $t; done)"
done
echo "$out" | grep RESULT
echo "$out" | awk '
  /^RESULT/ { x = $3 + 0; if (!($2 in v) || x < v[$2]) v[$2] = x }
  END {
    if (!("mha_fwd_bwd_traced" in v) || !("torch_mha_fwd_bwd_1t" in v)) { print "bench/attention.sh: a side produced no figures"; exit 1 }
    t = v["torch_mha_fwd_bwd_1t"]; tt = "1"
    if (v["torch_mha_fwd_bwd_2t"] < t) { t = v["torch_mha_fwd_bwd_2t"]; tt = "2" }
    f = v["torch_mha_fwd_1t"]; if (v["torch_mha_fwd_2t"] < f) f = v["torch_mha_fwd_2t"]
    l = v["mha_fwd_bwd_traced"]; if (v["mha_fwd_bwd_eager"] < l) l = v["mha_fwd_bwd_eager"]
    print "best of the rounds:"
    print "| MultiHeadAttention (16, 64, 128), 4 heads | luatf | PyTorch | speed-up |"
    print "|---|---|---|---|"
    printf "| forward + backward, traced tf.fn (ms) | %.2f | %.2f (%s thread(s)) | %.2fx |\n", v["mha_fwd_bwd_traced"], t, tt, t / v["mha_fwd_bwd_traced"]
    printf "| forward + backward, eager (ms) | %.2f | %.2f (%s thread(s)) | %.2fx |\n", v["mha_fwd_bwd_eager"], t, tt, t / v["mha_fwd_bwd_eager"]
    printf "| forward only, traced / no_grad (ms) | %.2f | %.2f | %.2fx |\n", v["mha_fwd_traced"], f, f / v["mha_fwd_traced"]
    printf "target: forward + backward at least as fast as torch.nn.MultiheadAttention: %s (%.2fx)\n", (l <= t ? "met" : "NOT met"), t / l
  }'
