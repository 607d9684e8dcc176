#!/usr/bin/env bash
# ThreadSanitizer over the thread contract of docs/embedding.md: builds
# build-tsan/ (-DLTF_TSAN=ON) and runs the host tests that share tensors and
# graphs between threads and contexts (core/tests/test_embed_lua_threads.c:
# 8 lua_States on 8 threads; core/tests/test_prefetch.c: tf.data's prefetch
# worker; core/tests/test_embed_lua_readpool.c: two lua_States reading files
# on tf.data reader pools). Any report fails. scripts/sanitize.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${TSAN_BUILD_DIR:-build-tsan}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLTF_TSAN=ON -DLTF_CUDA=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)" --target test_embed test_embed_lua test_embed_lua_threads test_prefetch test_embed_lua_readpool >/dev/null
cd "$dir"
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  ctest --output-on-failure -R '^(test_embed|test_prefetch)' 2>&1 | tee /tmp/ltf-tsan.$$ | tail -5
st=${PIPESTATUS[0]}
if grep -q "WARNING: ThreadSanitizer" /tmp/ltf-tsan.$$; then st=1; grep -A30 "WARNING: ThreadSanitizer" /tmp/ltf-tsan.$$ | head -60; fi
rm -f /tmp/ltf-tsan.$$
[ "$st" -eq 0 ] && echo "tsan: ok" || echo "tsan: FAILED"
exit "$st"
