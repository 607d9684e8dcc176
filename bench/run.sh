#!/usr/bin/env bash
# bench/run.sh: luatf's benchmarks side by side with the peers, in one run.
# Usage: bash bench/run.sh [--quick]
#   builds luatf (scripts/setup.sh), runs bench/bench.lua, bench/graph.lua
#   (traced graphs), bench/membw.c (copy bandwidth), the shared peer suite
#   (../shared/bench-peers, subset) and bench/numpy_extra.py, then prints
#   one table with the ratios the issues ask for.
# Needs python3-torch and python3-numpy for the peers (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
. scripts/env.sh
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torch python3-numpy >/dev/null
fi
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2

echo "== luatf (each benchmark in a fresh process, as the peers)" >&2
: > "$out/luatf.txt"
for b in small_op chain100 matmul elementwise reduce tape100 linreg; do
  lua5.4 bench/bench.lua "$b" | tee -a "$out/luatf.txt" >&2
done
echo "== eager per-op cost against the stored baseline (bench/eager.lua)" >&2
lua5.4 bench/eager.lua >&2 || echo "bench/eager.lua: REGRESSION against bench/eager_baseline.lua (table above)" >&2
echo "== traced graphs (bench/graph.lua)" >&2
for b in chain100 charunpack_small charunpack_large trace100 dispatch inplace; do
  lua5.4 bench/graph.lua "$b" | tee -a "$out/luatf.txt" >&2
done
# the same without in-place outputs, and CharUnpack [8192,400] with glibc
# keeping freed memory (the kernel's time without fresh pages per call)
LTF_NO_INPLACE=1 lua5.4 bench/graph.lua inplace | tee -a "$out/luatf.txt" >&2
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296 \
  lua5.4 bench/graph.lua charunpack_large_recycled | tee -a "$out/luatf.txt" >&2
echo "== copy bandwidth (bench/membw.c)" >&2
cc -O2 -pthread bench/membw.c -o "$out/membw"
"$out/membw" | tee -a "$out/luatf.txt" >&2
echo "== start-up beside bare lua5.4 (bench/startup.lua: best of 7, VmHWM)" >&2
lua5.4 bench/startup.lua | tee -a "$out/luatf.txt" >&2
echo "== AutoGraph conversion" >&2
lua5.4 bench/autograph.lua | tee -a "$out/luatf.txt" >&2
echo "== numpy (extra)" >&2
/usr/bin/python3 bench/numpy_extra.py | tee "$out/numpy_extra.txt" >&2
echo "== peers" >&2
peers=../shared/bench-peers/run_all.sh
jobs=small_op_us,chain100,charunpack,tape100,linreg,sgemm_1000_2t,startup
if [ -x "$peers" ] || [ -f "$peers" ]; then
  sh "$peers" --runs 1 --only "$jobs" --out "$out/peers.json" >&2 || echo "peers failed" >&2
fi
/usr/bin/python3 bench/report.py "$out"
echo "== linalg: 512x512 Cholesky and SVD beside NumPy (bench/linalg.sh)" >&2
bash bench/linalg.sh
echo "== sorting and contractions (bench/sort_contraction.sh)" >&2
bash bench/sort_contraction.sh
echo "== TFRecordDataset beside cat (bench/tfrecord.sh)" >&2
bash bench/tfrecord.sh
echo "== recurrent: LSTM layer and char-rnn beside PyTorch (bench/rnn.sh)" >&2
bash bench/rnn.sh
echo "== CSV: 1M rows x 10 columns (bench/csv.sh)" >&2
bash bench/csv.sh
echo "== MultiHeadAttention forward + backward beside PyTorch (bench/attention.sh)" >&2
bash bench/attention.sh
echo "== image decoding beside PIL (bench/io_image.sh)" >&2
bash bench/io_image.sh
echo "== tf.summary.scalar inside a traced training step (bench/summary.sh)" >&2
bash bench/summary.sh
echo "== ONNX resnet18 beside PyTorch and ONNX Runtime, load time (bench/onnx.sh)" >&2
bash bench/onnx.sh
# issue 8's training benchmarks take minutes (the convnet epochs, five
# interleaved rounds); set LTF_BENCH_TRAIN=1 to include them here, or run
#   bash bench/train.sh; bash bench/train_rounds.sh 5; bash bench/threads.sh 3
if [ "${LTF_BENCH_TRAIN:-0}" = 1 ]; then
  echo "== training (bench/train.sh, bench/train_rounds.sh)" >&2
  bash bench/train.sh
  bash bench/train_rounds.sh 5
fi
