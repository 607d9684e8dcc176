#!/usr/bin/env bash
# bench/rnn.sh: issue 19's recurrent benchmarks side by side in one run:
# luatf (bench/rnn.lua: the LSTM layer forward + backward, the char-rnn
# training step) and PyTorch (bench/rnn_peers.py, torch.nn.LSTM at 1 and 2
# threads, the faster taken), then a table of ratios (targets: 1.3x).
# Usage: bash bench/rnn.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
f="$out/rnn.txt"
: > "$f"
for b in lstm_layer char_rnn; do
  lua5.4 bench/rnn.lua "$b" | tee -a "$f"
  for t in 1 2; do
    (cd bench && OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 rnn_peers.py "$b" $t) | tee -a "$f"
  done
done
/usr/bin/python3 - "$f" <<'PY'
import sys
r = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 3 and p[0] == "RESULT":
        r[p[1]] = float(p[2])
print("| what | luatf | PyTorch (best of 1/2 threads) | luatf speed-up | target |")
print("|---|---|---|---|---|")
if "luatf_lstm_layer_ms" in r:
    t = min(v for k, v in r.items() if k.startswith("torch") and k.endswith("lstm_layer_ms"))
    print("| LSTM layer 32x50x128 -> 256, forward + backward | %.1f ms | %.1f ms | %.2fx | >= 1.3x |" %
          (r["luatf_lstm_layer_ms"], t, t / r["luatf_lstm_layer_ms"]))
if "luatf_char_rnn_chars_per_s" in r:
    t = max(v for k, v in r.items() if k.startswith("torch") and k.endswith("char_rnn_chars_per_s"))
    print("| char-rnn training (Embedding 64, LSTM 128, Dense 65; batch 32x50, Adam) | %.0f chars/s | %.0f chars/s | %.2fx | >= 1.3x |" %
          (r["luatf_char_rnn_chars_per_s"], t, r["luatf_char_rnn_chars_per_s"] / t))
PY
