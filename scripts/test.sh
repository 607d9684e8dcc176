#!/usr/bin/env bash
# Set up, build, and run every test: C unit tests (ctest), busted specs
# (Lua 5.4; examples run as specs), then the sanitizer checks
# (scripts/sanitize.sh: C tests and specs under ASan/UBSan/LSan, and both
# fuzzers for a short budget; each counts as one test; LTF_SANITIZE_CHECKS=0
# skips them). The GPU specs (spec/gpu/) run a second time on the simulated
# GPU (LTF_GPU_SIM=1: libltf_gpusim.so, docs/devices.md), so placement,
# copies and device memory are tested without a GPU. Ends with
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
# CI builds all: the CUDA module too wherever the toolkit is (its tests
# need no GPU; scripts/setup.sh builds it on its own only where a GPU
# driver is), unless LTF_CUDA says otherwise
export LTF_CUDA=${LTF_CUDA:-ON}
bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
. scripts/env.sh

c_pass=0; c_fail=0
ctest_out=$(cd "${BUILD_DIR:-build}" && ctest --output-on-failure 2>&1)
echo "$ctest_out"
if line=$(echo "$ctest_out" | grep -E "tests passed, [0-9]+ tests failed out of"); then
  total=$(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/')
  c_fail=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/')
  c_pass=$((total - c_fail))
fi

busted_out=$(lua5.4 /usr/bin/busted -o utfTerminal "$@" 2>&1)
status=$?
echo "$busted_out"
summary=$(echo "$busted_out" | sed 's/\x1b\[[0-9;]*m//g' | grep -E "[0-9]+ successes? / [0-9]+ failures? / [0-9]+ errors?" | tail -1)
b_pass=$(echo "$summary" | sed -E 's/^([0-9]+) success.*/\1/')
b_fail=$(echo "$summary" | sed -E 's/.* ([0-9]+) failures? .*/\1/')
b_err=$(echo "$summary" | sed -E 's/.* ([0-9]+) errors?.*/\1/')
if [ -z "$summary" ]; then b_pass=0; b_fail=1; b_err=0; fi
pass=$((c_pass + b_pass)); fail=$((c_fail + b_fail + b_err))
[ $status -ne 0 ] && [ $fail -eq 0 ] && fail=1

# the GPU specs again, on the simulated GPU: a 64 MiB device (out-of-memory
# specs) without a cumsum kernel (soft placement specs)
if [ "${LTF_GPU_SIM_CHECKS:-1}" != 0 ]; then
  sim_out=$(LTF_GPU_SIM=1 LTF_GPU_SIM_MEMORY=64M LTF_GPU_SIM_NO_KERNEL=cumsum \
            lua5.4 /usr/bin/busted -o utfTerminal spec/gpu 2>&1)
  sim_status=$?
  echo "== spec/gpu on the simulated GPU (LTF_GPU_SIM=1)"
  echo "$sim_out"
  sim=$(echo "$sim_out" | sed 's/\x1b\[[0-9;]*m//g' | grep -E "[0-9]+ successes? / [0-9]+ failures? / [0-9]+ errors?" | tail -1)
  if [ -n "$sim" ]; then
    s_pass=$(echo "$sim" | sed -E 's/^([0-9]+) success.*/\1/')
    s_fail=$(( $(echo "$sim" | sed -E 's/.* ([0-9]+) failures? .*/\1/') + $(echo "$sim" | sed -E 's/.* ([0-9]+) errors?.*/\1/') ))
    [ $sim_status -ne 0 ] && [ $s_fail -eq 0 ] && s_fail=1
    pass=$((pass + s_pass)); fail=$((fail + s_fail))
  else
    fail=$((fail + 1))
  fi
fi

# the multi-process specs under mpirun -np 2 and 3 (scripts/mpi-specs.sh;
# skipped with a message when mpirun or tf/mpi.so is absent)
if [ "${LTF_MPI_CHECKS:-1}" != 0 ]; then
  mpi_out=$(bash scripts/mpi-specs.sh 2>&1)
  echo "$mpi_out"
  mpi=$(echo "$mpi_out" | grep -E "^mpi-specs: [0-9]+ passed, [0-9]+ failed" | tail -1)
  if [ -n "$mpi" ]; then
    pass=$((pass + $(echo "$mpi" | sed -E 's/^mpi-specs: ([0-9]+) passed.*/\1/')))
    fail=$((fail + $(echo "$mpi" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  else
    fail=$((fail + 1))
  fi
fi

if [ "${LTF_SANITIZE_CHECKS:-1}" != 0 ]; then
  san_out=$(bash scripts/sanitize.sh 2>&1)
  echo "$san_out"
  san=$(echo "$san_out" | grep -E "^sanitize: [0-9]+ passed, [0-9]+ failed" | tail -1)
  if [ -n "$san" ]; then
    pass=$((pass + $(echo "$san" | sed -E 's/^sanitize: ([0-9]+) passed.*/\1/')))
    fail=$((fail + $(echo "$san" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  else
    fail=$((fail + 1))
  fi
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
