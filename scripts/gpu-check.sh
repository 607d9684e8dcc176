#!/usr/bin/env bash
# scripts/gpu-check.sh: everything that needs a GPU, in one command for a
# lent GPU machine (../shared/device/README.md): build with the CUDA backend,
# run ctest (the CUDA module's own test opens the GPU), the GPU specs and the
# whole suite with the GPU present, then bench/gpu.lua (luatf on the GPU and,
# for reference, on the CPU) and bench/gpu_peers.py (PyTorch CUDA), printed
# as one table last. Logs go to $OUT (or /tmp/gpu-check).
#   . .carry/env.sh && scripts/gpu-check.sh          on the GPU machine
#   scripts/gpu-check.sh --build                     without a GPU: build and
#                                                    ctest only (the no-GPU paths)
# Without a GPU (and without --build) it prints "no GPU: skipped" and exits 0.
# Exit status: nonzero when a step failed.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_ONLY=0
[ "${1:-}" = "--build" ] && BUILD_ONLY=1
if [ -f .carry/env.sh ] && [ -z "${CARRY_SOURCED:-}" ] && ! command -v lua5.4 >/dev/null; then
  . .carry/env.sh
fi
LOG=${OUT:-/tmp/gpu-check}
mkdir -p "$LOG"

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi
if [ $have_gpu = 0 ] && [ $BUILD_ONLY = 0 ]; then
  echo "no GPU: skipped"
  exit 0
fi

status=0
step() {   # step NAME COMMAND...: run, log to $LOG/NAME.log, record the outcome
  local name=$1; shift
  local t0=$(date +%s)
  if "$@" > "$LOG/$name.log" 2>&1; then r=ok; else r=FAILED; status=1; fi
  printf '%-12s %-7s %4ss  %s\n' "$name" "$r" $(( $(date +%s) - t0 )) "$LOG/$name.log" | tee -a "$LOG/summary.txt"
}
: > "$LOG/summary.txt"

BUILD=${BUILD_DIR:-build-gpu}
ARCH=${CUDA_ARCH:-}
if [ -z "$ARCH" ] && [ $have_gpu = 1 ]; then
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
fi
ARCH=${ARCH:-90}
GEN=""
command -v ninja >/dev/null && GEN="-G Ninja"
step configure cmake -S . -B "$BUILD" $GEN -DLTF_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH"
step build cmake --build "$BUILD" -j"$(nproc)"
grep -q "LTF_CUDA: building" "$LOG/configure.log" || { echo "the CUDA backend was not configured (see $LOG/configure.log)"; status=1; }
[ -f "$BUILD/libltf_cuda.so" ] || { echo "no $BUILD/libltf_cuda.so"; status=1; }
step ctest bash -c "cd '$BUILD' && ctest --output-on-failure -j4"
grep -E "CUDA devices|no GPU" "$LOG/ctest.log" | head -3

export LUA_PATH_5_4="$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;${LUA_PATH_5_4:-;}"
export LUA_CPATH_5_4="$ROOT/$BUILD/?.so;${LUA_CPATH_5_4:-;}"
export LTF_CUDA_MODULE="$ROOT/$BUILD/libltf_cuda.so"   # where the engine may look for the module
BUSTED=${BUSTED:-/opt/carry/usr/bin/busted}
[ -f "$BUSTED" ] || BUSTED=/usr/bin/busted
if [ $have_gpu = 1 ]; then
  if [ -d spec/gpu ]; then step spec_gpu lua5.4 "$BUSTED" spec/gpu; else echo "spec/gpu: none yet"; fi
  step spec_all lua5.4 "$BUSTED"
  tail -3 "$LOG/spec_all.log"
fi
step bench_gpu lua5.4 bench/gpu.lua
step bench_cpu env LTF_BENCH_CPU=1 lua5.4 bench/gpu.lua
step bench_peers python3 bench/gpu_peers.py

# one table: the figures of the three runs side by side
python3 - "$LOG" <<'PY'
import sys, os
log = sys.argv[1]
cols = [("luatf GPU", "bench_gpu.log"), ("luatf CPU", "bench_cpu.log"), ("PyTorch CUDA", "bench_peers.log")]
rows, units, notes = [], {}, []
vals = {}
for label, f in cols:
    p = os.path.join(log, f)
    for line in open(p) if os.path.exists(p) else []:
        w = line.split()
        if len(w) == 4 and w[0] == "RESULT":
            if w[1] not in units:
                rows.append(w[1]); units[w[1]] = w[3]
            vals[(label, w[1])] = float(w[2])
        elif "no GPU" in line:
            notes.append("%s: %s" % (label, line.strip()))
print()
print("%-22s %-8s" % ("benchmark", "unit") + "".join("%14s" % c for c, _ in cols))
for r in rows:
    print("%-22s %-8s" % (r, units[r]) + "".join("%14s" % ("%.4g" % vals[(c, r)] if (c, r) in vals else "-") for c, _ in cols))
for n in notes:
    print(n)
PY
echo
cat "$LOG/summary.txt"
exit $status
