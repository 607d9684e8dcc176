#!/usr/bin/env bash
# Footprint of luatf (issue 10, bench/README.md "Footprint"): sizes of the
# stripped CPU build's libraries and module, the Lua files, resident memory
# after require("tf"), start-up wall time, and the per-call overhead of
# calling a traced function from C (examples/embed/loop.c). Needs build/.
#   bash bench/footprint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build -j2 --target ltf ltf_lua tf_core embed_loop >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for f in build/libltf.so build/libltf_lua.so build/tf/core.so; do
  cp -L "$f" "$tmp/"; strip "$tmp/$(basename "$f")"
  printf "size %-14s %8d bytes stripped\n" "$(basename "$f")" "$(stat -c %s "$tmp/$(basename "$f")")"
done
printf "size %-14s %8d bytes (%d files)\n" "lua/tf/*.lua" "$(cat lua/tf/*.lua | wc -c)" "$(ls lua/tf/*.lua | wc -l)"
. scripts/env.sh
# OpenBLAS is not linked but loaded on the first product (docs/internals.md): the file a matmul maps
blas=$(lua5.4 -e 'local tf = require("tf") tf.matmul(tf.ones({2, 2}), tf.ones({2, 2}))
  for l in io.lines("/proc/self/maps") do local p = l:match("(/%S*libopenblas%S*)") if p then print(p) break end end')
printf "size %-14s %8d bytes (dependency, loaded on first use: %s)\n" "libopenblas" "$(stat -L -c %s "$blas")" "$blas"
rss() { lua5.4 -e "$1"' local f = io.open("/proc/self/status") for l in f:lines() do
  local k, v = l:match("^(%w+):%s+(%d+) kB") if k == "VmRSS" or k == "RssAnon" or k == "RssFile" then io.write(k, " ", v, " kB  ") end end print()'; }
echo "rss bare lua5.4:        $(rss '')"
echo "rss after require(tf):  $(rss 'require("tf")')"
lua5.4 bench/startup.lua | sed 's/^RESULT /startup /'
for i in 1 2 3; do build/examples/embed_loop 10000 | grep us/call; done
