#!/usr/bin/env bash
# bench/csv.sh: issue 20's CSV figure in one run: a CSV of 1M rows x 10
# columns parsed by luatf (bench/csv.lua: CsvDataset, TextLineDataset +
# decode_csv, make_csv_dataset; target >= 50 MB/s) beside Python's csv
# module and numpy.loadtxt (bench/csv_peers.py).
# Usage: bash bench/csv.sh [rows]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${BENCH_OUT:-/tmp/luatf-bench}
mkdir -p "$out"
rows=${1:-1000000}
path="$out/csv_${rows}.csv"
lua5.4 bench/csv.lua "$path" "$rows"
/usr/bin/python3 bench/csv_peers.py "$path"
