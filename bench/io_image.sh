#!/usr/bin/env bash
# bench/io_image.sh: image decoding beside PIL (python3-pil) on the same
# files: 1,000 28x28 PNGs and 100 640x480 JPEGs written by
# bench/io_image_peers.py into a temporary directory; both sides decode
# bytes already in memory, median of 5 passes; luatf and PIL alternate for
# ROUNDS rounds (default 2) so that both see the same machine load.
# Usage: bash bench/io_image.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
dir=$(mktemp -d /tmp/luatf-io-image-XXXXXX)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 bench/io_image_peers.py "$dir" make
for r in $(seq "${1:-2}"); do
  echo "-- round $r (load $(cut -d' ' -f1 /proc/loadavg))"
  lua5.4 bench/io_image.lua "$dir"
  /usr/bin/python3 bench/io_image_peers.py "$dir" time
done
