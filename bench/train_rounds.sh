#!/usr/bin/env bash
# bench/train_rounds.sh: the MLP and guide-model train steps of bench/train.sh,
# luatf and its peers interleaved over several rounds, with each round's
# ratio and the medians. On a shared 2-core VM a process's two-thread speed
# swings between runs (luatf's MLP step 0.26 or 0.50 ms, PyTorch's guide step
# 1.4 to 4.8 ms), so one run's ratio says little; the median of rounds says
# more. Usage: bash bench/train_rounds.sh [rounds (default 5)]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
rounds=${1:-5}
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
f="$out/train_rounds.txt"
: > "$f"
for r in $(seq "$rounds"); do
  echo "round $r" | tee -a "$f"
  for b in mlp_sgd guide_step; do
    lua5.4 bench/train.lua "$b" | head -1 | tee -a "$f"
    for t in 1 2; do
      OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/train_peers.py "$b" $t | tee -a "$f"
    done
  done
done
/usr/bin/python3 - "$f" <<'PY'
import sys, statistics
rounds, cur = [], None
for line in open(sys.argv[1]):
    p = line.split()
    if p and p[0] == "round":
        cur = {}; rounds.append(cur)
    elif len(p) >= 3 and p[0] == "RESULT" and cur is not None:
        cur[p[1]] = float(p[2])
def best(r, *names):
    v = [r[n] for n in names if n in r]
    return min(v) if v else None
rows = [("MLP step vs PyTorch", "mlp_sgd_step_traced", ("torch_mlp_sgd_step_1t", "torch_mlp_sgd_step_2t")),
        ("MLP step vs NumPy", "mlp_sgd_step_traced", ("numpy_mlp_sgd_step_1t", "numpy_mlp_sgd_step_2t")),
        ("guide step vs PyTorch", "guide_step_traced", ("torch_guide_step_1t", "torch_guide_step_2t"))]
print("| what | luatf per round (ms) | peer per round, best of 1/2 threads (ms) | ratio per round | median ratio |")
print("|---|---|---|---|---|")
for what, mine, peers in rows:
    m = [r.get(mine) for r in rounds]
    p = [best(r, *peers) for r in rounds]
    ratio = [b / a for a, b in zip(m, p) if a and b]
    if not ratio:
        continue
    print("| %s | %s | %s | %s | %.2fx |" % (what, ", ".join("%.3g" % v for v in m if v),
          ", ".join("%.3g" % v for v in p if v), ", ".join("%.2f" % v for v in ratio), statistics.median(ratio)))
PY
