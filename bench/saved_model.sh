#!/usr/bin/env bash
# bench/saved_model.sh: tf.saved_model.load of the MNIST convnet beside
# torch.jit.load of the same network (TorchScript), one run, side by side.
#   bash bench/saved_model.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
runs=${1:-20}
lua5.4 bench/saved_model.lua /tmp/luatf-bench-saved-model "$runs"
OMP_NUM_THREADS=2 /usr/bin/python3 bench/saved_model_peers.py /tmp/luatf-bench-saved-model-torch "$runs" ||
  echo "(PyTorch not available: no peer figure)"
