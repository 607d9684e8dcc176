#!/usr/bin/env bash
# bench/tfrecord.sh: TFRecordDataset over 100k records of 1 KB beside cat on
# the same file (warm page cache). Usage: bash bench/tfrecord.sh [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
lua5.4 bench/tfrecord.lua "${1:-/var/tmp/luatf-tfrecord-bench.tfrecord}" 100000 1024
