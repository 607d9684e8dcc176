#!/usr/bin/env bash
# Install what luatf needs on Debian 12 (when missing) and build it into
# build/. Used by README's two commands and by .ci/run.
#   bash scripts/setup.sh           everything: the Lua module first, then
#                                   the CUDA module (when configured), the
#                                   tests, the libraries for C hosts
#   bash scripts/setup.sh --runtime only what require("tf") needs on this
#                                   machine (scripts/demo.sh): the Lua
#                                   module, and the CUDA module when configured
# The CUDA module (libltf_cuda.so: nvcc, minutes) is built when LTF_CUDA
# says so: AUTO (default) when the toolkit is found and an NVIDIA driver is
# present, ON whenever the toolkit is found (scripts/test.sh: CI builds all),
# OFF never. LTF_CUDA=ON|OFF|AUTO in the environment sets it (kept in the
# build directory's cache until set again).
# Prints one line per step; a failing step prints the end of its log
# ($BUILD_DIR/setup-*.log).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
[ "${1:-}" = "--runtime" ] && mode=runtime
start=$(date +%s)
step() { echo "setup: [$(( $(date +%s) - start ))s] $*"; }

# clang + libclang-rt-14-dev: libFuzzer for scripts/fuzz-c.sh (scripts/sanitize.sh)
pkgs="build-essential cmake lua5.4 liblua5.4-dev lua-cjson libopenblas-dev zlib1g-dev libpcre2-dev libpng-dev libjpeg62-turbo-dev libgif-dev python3-pil lua-busted luarocks clang libclang-rt-14-dev python3 protobuf-c-compiler libprotobuf-c-dev python3-protobuf openmpi-bin libopenmpi-dev python3-onnx libonnx-testdata python3-torch python3-torchvision nodejs"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  step "installing packages:$missing (apt-get)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$BUILD_DIR"
cuda_arg=()
[ -n "${LTF_CUDA:-}" ] && cuda_arg=(-DLTF_CUDA="$LTF_CUDA")
step "configuring $BUILD_DIR (cmake${LTF_CUDA:+, LTF_CUDA=$LTF_CUDA})"
if ! cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "${cuda_arg[@]}" ${CMAKE_ARGS:-} \
     >"$BUILD_DIR/setup-configure.log" 2>&1; then
  tail -n 40 "$BUILD_DIR/setup-configure.log"; exit 1
fi
grep -E "^-- LTF_CUDA" "$BUILD_DIR/setup-configure.log" | sed 's/^-- /setup:   /' || true

# cmake --build with one line per finished target ("[ 42%] Built target x")
# instead of silence; the whole output goes to $BUILD_DIR/setup-<name>.log
# and a line every 30 s while one compile runs long (nvcc)
build() {
  local name=$1 what=$2; shift 2
  local log="$BUILD_DIR/setup-$name.log" t0 ok=1 beat
  t0=$(date +%s)
  ( while sleep 30 </dev/null >/dev/null 2>&1; do
      echo "setup:   ... still building $what ($(( $(date +%s) - t0 ))s)"; done ) &
  beat=$!
  cmake --build "$BUILD_DIR" -j"$(nproc)" "$@" 2>&1 | tee "$log" |
    { grep --line-buffered -E "Built target" || true; } | sed -u 's/^/setup:   /' || ok=0
  kill "$beat" 2>/dev/null; wait "$beat" 2>/dev/null || true
  if [ $ok = 0 ]; then
    echo "setup: building $name failed; the end of $log:"
    grep -E "error|Error" "$log" | head -n 20 || true
    tail -n 30 "$log"
    exit 1
  fi
}

step "building the CPU engine and the Lua module ($BUILD_DIR/tf/core.so)"
build core "the CPU engine and the Lua module" --target tf_core
if grep -q "^LTF_CUDA_BUILT:INTERNAL=ON" "$BUILD_DIR/CMakeCache.txt"; then
  step "building the CUDA module ($BUILD_DIR/libltf_cuda.so: nvcc compiles every kernel, this takes minutes)"
  build cuda "the CUDA module" --target ltf_runtime
fi
if [ "$mode" = all ]; then
  step "building the rest: tests, the simulated GPU (the CUDA kernels compiled for the host: minutes), libraries for C hosts"
  build all "the rest"
fi
step "built $BUILD_DIR/tf/core.so"
# onnxruntime-node for the ONNX export specs (tools/ort_run.js, spec/onnx/export_*):
# tests only; its CPU binary ships in the package (--ignore-scripts: the
# postinstall only fetches CUDA parts). Skipped, with the reason, when npm is
# missing or the registry is out of reach: those specs are then pending.
if [ "$mode" = all ]; then
  if [ -f "$BUILD_DIR/npm/node_modules/onnxruntime-node/package.json" ]; then
    step "onnxruntime-node: already in $BUILD_DIR/npm"
  elif ! command -v npm >/dev/null 2>&1; then
    step "onnxruntime-node: skipped (npm is not installed: apt-get install npm); the ONNX Runtime specs will be pending"
  elif timeout 600 npm install --ignore-scripts --no-audit --no-fund --prefix "$BUILD_DIR/npm" onnxruntime-node \
       >"$BUILD_DIR/setup-npm.log" 2>&1; then
    step "onnxruntime-node installed into $BUILD_DIR/npm"
  else
    step "onnxruntime-node: skipped (npm install failed, offline? $BUILD_DIR/setup-npm.log); the ONNX Runtime specs will be pending"
  fi
fi
