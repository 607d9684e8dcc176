#!/usr/bin/env bash
# Set up, build what require("tf") needs here (the CPU engine and the Lua
# module first; the CUDA module where LTF_CUDA says: scripts/setup.sh), and
# run the main demo (examples/eager_basics.lua). scripts/test.sh builds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --runtime   # the Lua module (and the CUDA module where a GPU driver is): scripts/setup.sh
. scripts/env.sh
lua5.4 examples/eager_basics.lua
