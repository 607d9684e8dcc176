#!/usr/bin/env bash
# Fuzz the C API for a fixed budget: build every core/tests/fuzz/fuzz_*.c
# with clang + libFuzzer + ASan/UBSan into build-fuzz/ (-DLTF_FUZZ=ON) and
# run each target for SECONDS_PER_TARGET seconds (default 30), starting from
# the committed seeds in core/tests/fuzz/corpus/<target>/. New corpus
# entries go to a temporary directory, never into the repository; crash,
# leak, timeout and OOM inputs go to build-fuzz/artifacts/<target>/.
# Exits non-zero when any target reports; without clang/libFuzzer it says
# "skipped" and exits 0. With FUZZ_C_RUNS=N each target stops after N runs
# from a fixed seed (FUZZ_C_SEED, default 1) instead, the seconds being only
# a cap: the same inputs on every machine (CI); a target's source may lower
# its count with a "FUZZ_C_MAX_RUNS=N" line (the image decoders do).
#   bash scripts/fuzz-c.sh [SECONDS_PER_TARGET]
# Reproduce a report: build-fuzz/fuzz/<target> <crash file>
set -uo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
CC_FUZZ=${CC_FUZZ:-clang}
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}

if ! command -v "$CC_FUZZ" >/dev/null 2>&1; then
  echo "fuzz-c: $CC_FUZZ not found: skipped"
  exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$probe/p.c"
if ! "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz-c: $CC_FUZZ cannot link libFuzzer (-fsanitize=fuzzer): skipped"
  exit 0
fi

echo "fuzz-c: building $BUILD_DIR (clang, libFuzzer, ASan, UBSan)"
if ! cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER="$CC_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DLTF_FUZZ=ON -DLTF_TESTS=OFF -DLTF_CUDA=OFF >"$probe/configure.log" 2>&1; then
  cat "$probe/configure.log"
  echo "fuzz-c: configure failed"
  exit 1
fi
if ! cmake --build "$BUILD_DIR" -j"$(nproc)" --target ltf_fuzz >"$probe/build.log" 2>&1; then
  grep -E "error|Error" "$probe/build.log" | head -40
  echo "fuzz-c: build failed"
  exit 1
fi

fixed=()
[ -n "${FUZZ_C_RUNS:-}" ] && fixed=(-runs="$FUZZ_C_RUNS" -seed="${FUZZ_C_SEED:-1}")
targets=0
total_runs=0
crashes=0
for src in core/tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  bin="$BUILD_DIR/fuzz/$name"
  seeds="core/tests/fuzz/corpus/$name"
  corpus="$probe/corpus-$name"
  art="$BUILD_DIR/artifacts/$name"
  log="$BUILD_DIR/artifacts/$name.log"
  mkdir -p "$corpus" "$art" "$seeds"
  targets=$((targets + 1))
  # a target whose runs are slow (image decoders) caps CI's fixed count with
  # a "FUZZ_C_MAX_RUNS=N" line in its source
  runs_args=("${fixed[@]}")
  cap=$(sed -n 's/.*FUZZ_C_MAX_RUNS=\([0-9][0-9]*\).*/\1/p' "$src" | head -1)
  if [ -n "${FUZZ_C_RUNS:-}" ] && [ -n "$cap" ] && [ "$FUZZ_C_RUNS" -gt "$cap" ]; then
    runs_args=(-runs="$cap" -seed="${FUZZ_C_SEED:-1}")
  fi
  # the first corpus directory receives new entries: the temporary one
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} "$bin" -max_total_time="$secs" "${runs_args[@]}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
         -artifact_prefix="$art/" "$corpus" "$seeds" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  runs=${runs:-0}
  total_runs=$((total_runs + runs))
  if [ "$rc" -ne 0 ]; then
    crashes=$((crashes + 1))
    echo "fuzz-c: $name: FAILED (exit $rc) after $runs runs; log $log"
    grep -E "ERROR:|runtime error:|contract broken|SUMMARY:|#[0-9]+ 0x" "$log" | grep -v "in fuzzer::" | head -30
    grep -E "Test unit written to|artifact_prefix" "$log" | sed 's/^/fuzz-c:   /'
  else
    echo "fuzz-c: $name: $runs runs (${rate:-?}/s), ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) new entries"
  fi
done

echo "fuzz-c: $targets targets, $total_runs runs, $crashes crashes"
[ "$crashes" -eq 0 ]
