#!/bin/sh
# The Lua training script saves a model; the C host (no Lua) loads it and
# must print the outputs the script recorded (within 1e-5). ctest: embed_serve.
#   sh examples/embed/serve_test.sh path/to/embed_serve
set -eu
host=$1
here=$(dirname "$0")
dir=$(mktemp -d /tmp/luatf-serve-XXXXXX)
trap 'rm -rf "$dir"' EXIT
# (a sanitizer build: CMake names the runtimes the Lua interpreter must preload)
LD_PRELOAD=${LTF_SERVE_LUA_PRELOAD:-${LD_PRELOAD:-}} lua5.4 "$here/train_and_save.lua" "$dir/model"
"$host" "$dir/model" "$dir/model/inputs.txt" > "$dir/got.txt"
cat "$dir/got.txt"
paste -d'\n' "$dir/model/expected.txt" "$dir/got.txt" | awk '
  NR % 2 == 1 { n = split($0, e, " "); want = $0; next }
  { m = split($0, g, " ")
    if (m != n || g[1] != e[1]) { print "line " NR/2 ": got \"" $0 "\", expected \"" want "\""; bad = 1; next }
    for (i = 2; i <= n; i++) { d = g[i] - e[i]; if (d < 0) d = -d; if (d > 1e-5) { print "line " NR/2 ": " g[i] " vs " e[i]; bad = 1 } } }
  END { if (NR != 10) { print "expected 5 lines, got " NR/2; exit 1 } exit bad }'
echo "embed_serve: outputs match the Lua model's"
