#!/usr/bin/env bash
# bench/onnx.sh: issue 22 item 7 in one run: torchvision resnet18 (random
# weights) exported to ONNX (tools/onnx_models.py, opset 13, into a
# temporary directory), then inference at batch 1 and 16 in luatf
# (tf.onnx.load, bench/onnx.lua, 1 and 2 threads, the faster taken),
# PyTorch on the source module at 1 and 2
# threads (bench/onnx_peers.py, the faster taken) and ONNX Runtime
# (onnxruntime-node from npm, bench/onnx_ort.js, 1 and 2 threads, the faster
# taken) on the same file; and luatf's load time (best of 5), the memory
# a loaded model keeps and the peak memory while it loads (VmHWM). Targets: luatf >= PyTorch, within 1.5x of ONNX
# Runtime; load under 150 ms without a second copy of the weights.
# Usage: bash bench/onnx.sh     (BENCH_OUT: where the raw results go)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export LUA_PATH_5_4="$PWD/bench/?.lua;$LUA_PATH_5_4"
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
f="$out/onnx.txt"
: > "$f"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/onnx_models.py "$tmp" --models resnet18 --opsets 13 >/dev/null 2>&1 || { echo "onnx.sh: export failed (needs python3-torch, python3-torchvision, python3-onnx)"; exit 1; }
model="$tmp/resnet18_op13.onnx"
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
lua5.4 bench/onnx.lua load "$model" | tee -a "$f"
for b in 1 16; do
  for t in 1 2; do
    OPENBLAS_NUM_THREADS=$t lua5.4 bench/onnx.lua infer "$model" $b $t | tee -a "$f"
    OMP_NUM_THREADS=$t /usr/bin/python3 bench/onnx_peers.py $b $t | tee -a "$f"
    if command -v node >/dev/null; then
      NODE_PATH=${NODE_PATH:-/work/npm-ort/node_modules} node bench/onnx_ort.js "$model" $b $t | tee -a "$f"
    fi
  done
done
/usr/bin/python3 - "$f" <<'PY'
import sys
r = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 3 and p[0] == "RESULT":
        r[p[1]] = float(p[2])
def best(prefix, suffix):
    v = [x for k, x in r.items() if k.startswith(prefix) and k.endswith(suffix)]
    return min(v) if v else None
print("| what | luatf (best of 1/2 threads) | PyTorch (best of 1/2 threads) | ONNX Runtime (best of 1/2 threads) | luatf vs PyTorch | luatf vs ORT | targets |")
print("|---|---|---|---|---|---|---|")
for b in (1, 16):
    l = best("luatf_", "_resnet18_b%d_ms" % b)
    t = best("torch_", "_resnet18_b%d_ms" % b)
    o = best("ort_", "_resnet18_b%d_ms" % b)
    if l is None:
        continue
    print("| resnet18 inference, batch %d | %.1f ms | %s | %s | %s | %s | >= 1x, within 1.5x |" % (
        b, l, "%.1f ms" % t if t else "-", "%.1f ms" % o if o else "-",
        "%.2fx faster" % (t / l) if t else "-", "%.2fx ORT's time" % (l / o) if o else "-"))
if "luatf_load_ms" in r:
    print("| load resnet18 (%.1f MB file) | %.1f ms | | %s | | | < 150 ms |" % (
        r["model_mb"], r["luatf_load_ms"], "%.1f ms (session creation)" % best("ort_", "_load_ms") if best("ort_", "_load_ms") else "-"))
    print("| memory a loaded resnet18 keeps (RSS) | %.1f MB | | | | | one copy of the weights (%.1f MB) |" % (
        r["luatf_load_rss_mb"], r["model_mb"]))
    if "luatf_load_peak_rss_mb" in r:
        print("| peak RSS while it loads (VmHWM, over the RSS before) | %.1f MB | | | | | about one copy of the weights (%.1f MB) |" % (
            r["luatf_load_peak_rss_mb"], r["model_mb"]))
PY
