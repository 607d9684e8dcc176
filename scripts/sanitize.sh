#!/usr/bin/env bash
# The sanitizer checks CI runs (scripts/test.sh calls this after the normal
# suite): build build-asan/ (ASan + UBSan), run the C tests and the whole
# spec suite under ASan/UBSan/LeakSanitizer, then both fuzzers over a fixed
# set of inputs (and scripts/tsan.sh: the embedding thread tests under
# ThreadSanitizer): the Lua API fuzzer (tools/fuzz/) on seeds 1..LUA_BATCHES
# and the libFuzzer targets over the C API (core/tests/fuzz/,
# scripts/fuzz-c.sh) for C_RUNS runs each from seed 1, and the checkpoint
# corruption campaign (tools/fuzz/ckpt_corrupt.lua --quick). Fixed inputs make the
# stage a regression check that passes or fails the same way on every
# machine; open-ended searches are the long runs of tools/fuzz/README.md.
# Any report fails.
#   bash scripts/sanitize.sh [LUA_BATCHES [C_RUNS_PER_TARGET]]
# Ends with "sanitize: N passed, M failed" (each stage is one check).
set -uo pipefail
cd "$(dirname "$0")/.."

lua_batches=${1:-300}
c_runs=${2:-300000}
pass=0; fail=0
check() {   # check NAME STATUS
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "sanitize: $1: ok"
  else fail=$((fail + 1)); echo "sanitize: $1: FAILED"; fi
}

export BUILD_DIR=build-asan
if ! CMAKE_ARGS="-DLTF_SANITIZE=ON ${CMAKE_ARGS:-}" BUILD_TYPE=RelWithDebInfo bash scripts/setup.sh; then
  echo "sanitize: 0 passed, 1 failed"
  exit 1
fi
. scripts/env.sh

# C unit tests: the executables are instrumented themselves
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure >/tmp/ltf-sanitize-ctest.$$ 2>&1)
st=$?
[ $st -ne 0 ] && cat /tmp/ltf-sanitize-ctest.$$
rm -f /tmp/ltf-sanitize-ctest.$$
check "ctest (ASan/UBSan/LSan)" $st

# The spec suite: lua5.4 is not instrumented, so the runtimes are preloaded.
# allocator_may_return_null: specs ask for absurd sizes on purpose and
# expect ResourceExhaustedError, not ASan's abort.
out=$(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
      lua5.4 /usr/bin/busted -o TAP 2>&1)
st=$?
reports=$(echo "$out" | grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" | head -20)
notok=$(echo "$out" | grep -E "^not ok" | head -20)
echo "$out" | grep -E "^1\.\.[0-9]+" | sed 's/^/sanitize: specs under ASan: /'
if [ -n "$reports$notok" ] || [ $st -ne 0 ]; then
  echo "$reports"; echo "$notok"
  echo "$out" | grep -E "^#" | head -40
  st=1
fi
check "spec suite (ASan/UBSan/LSan)" $st

# The GPU specs on the simulated GPU (its arena stays PROT_NONE under ASan:
# ASan does not watch mmap'd memory, and a stray host read still faults)
out=$(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
      LTF_GPU_SIM=1 LTF_GPU_SIM_MEMORY=64M LTF_GPU_SIM_NO_KERNEL=cumsum \
      lua5.4 /usr/bin/busted -o TAP spec/gpu 2>&1)
st=$?
reports=$(echo "$out" | grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" | head -20)
notok=$(echo "$out" | grep -E "^not ok" | head -20)
if [ -n "$reports$notok" ] || [ $st -ne 0 ]; then
  echo "$reports"; echo "$notok"
  st=1
fi
check "spec/gpu on the simulated GPU (ASan/UBSan/LSan)" $st

# The Lua API fuzzer: random calls in child processes, deterministic seeds
lua5.4 tools/fuzz/run.lua --build build-asan --batches "$lua_batches" --calls 200 --seed 1
check "Lua API fuzzer (seeds 1..$lua_batches)" $?

# The checkpoint corruption campaign, quick form (docs/checkpoints.md,
# "Corruption"; the full form: lua5.4 tools/fuzz/ckpt_corrupt.lua): every
# truncation, bit flips and zeroed ranges over every byte of a small
# checkpoint; any silent wrong restore, accepted change or half-restore fails
out=$(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
      lua5.4 tools/fuzz/ckpt_corrupt.lua --quick 2>&1)
st=$?
echo "$out" | tail -1 | sed 's/^/sanitize: /'
if echo "$out" | grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:"; then
  echo "$out" | grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" | head -20
  st=1
fi
[ $st -ne 0 ] && echo "$out" | tail -25
check "checkpoint corruption campaign (quick, ASan/UBSan/LSan)" $st

# The .keras corruption campaign, quick form (docs/keras_saving.md; the full
# form: lua5.4 tools/fuzz/keras_corrupt.lua): truncations, bit flips and
# zeroed ranges of a saved model; any raw Lua error or wrong model loaded fails
out=$(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
      lua5.4 tools/fuzz/keras_corrupt.lua --quick 2>&1)
st=$?
echo "$out" | tail -1 | sed 's/^/sanitize: /'
if echo "$out" | grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:"; then
  echo "$out" | grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" | head -20
  st=1
fi
[ $st -ne 0 ] && echo "$out" | tail -25
check ".keras corruption campaign (quick, ASan/UBSan/LSan)" $st

# ThreadSanitizer: hosts sharing tensors and graphs across threads (docs/embedding.md)
bash scripts/tsan.sh >/tmp/ltf-sanitize-tsan.$$ 2>&1
st=$?
[ $st -ne 0 ] && cat /tmp/ltf-sanitize-tsan.$$
rm -f /tmp/ltf-sanitize-tsan.$$
check "embedding threads (TSan)" $st

# libFuzzer over the C API (clang from Debian; skipped cleanly without it);
# the seconds only cap a slow machine
FUZZ_C_RUNS=$c_runs bash scripts/fuzz-c.sh 300
check "libFuzzer targets ($c_runs runs each)" $?

echo "sanitize: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
