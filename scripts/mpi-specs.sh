#!/bin/bash
# scripts/mpi-specs.sh: the multi-process specs under MPI. One mpirun launch
# per group size (2, then 3: catches even-size assumptions) runs busted over
# every file given (default: spec/distribute/*_spec.lua) in each rank; each
# rank writes its own TAP log, and the counts of every rank are summed.
# Files that need one process (the fault spec starts its own mpirun) see
# size 1 nowhere here and mark themselves pending. Called by scripts/test.sh;
# skipped, with a message, when mpirun or tf/mpi.so is absent.
#   scripts/mpi-specs.sh [spec files...]      MPI_SPECS_NP="2 3" by default
# Last line: "mpi-specs: N passed, M failed".
cd "$(dirname "$0")/.." || exit 2
. scripts/env.sh
build=${BUILD_DIR:-build}
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpi-specs: SKIPPED: mpirun not found (apt-get install openmpi-bin libopenmpi-dev; scripts/setup.sh does)"
  echo "mpi-specs: 0 passed, 0 failed"
  exit 0
fi
if [ ! -f "$build/tf/mpi.so" ]; then
  echo "mpi-specs: SKIPPED: $build/tf/mpi.so not built (CMake did not find MPI: apt-get install libopenmpi-dev)"
  echo "mpi-specs: 0 passed, 0 failed"
  exit 0
fi
if [ $# -gt 0 ]; then files=("$@"); else files=(spec/distribute/*_spec.lua); fi
pass=0 fail=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
for np in ${MPI_SPECS_NP:-2 3}; do
  start=$(date +%s)
  # one BLAS/pool thread per rank: the ranks share this machine's cores
  # LTF_MPI_TIMEOUT: a collective left waiting by a failed rank gives up in 60 s
  OPENBLAS_NUM_THREADS=1 LTF_NUM_THREADS=${LTF_NUM_THREADS:-1} LTF_MPI_TIMEOUT=${LTF_MPI_TIMEOUT:-60} \
    timeout ${MPI_SPECS_TIMEOUT:-300} \
    mpirun --allow-run-as-root --oversubscribe -np "$np" \
    sh -c 'exec lua5.4 /usr/bin/busted -o TAP "$@" > "'"$logs"'/np'"$np"'.rank$OMPI_COMM_WORLD_RANK.log" 2>&1' sh "${files[@]}"
  rc=$?
  np_pass=0 np_fail=0
  for ((k = 0; k < np; k++)); do
    log="$logs/np$np.rank$k.log"
    if [ ! -s "$log" ]; then
      echo "mpi-specs: -np $np rank $k wrote no log"; np_fail=$((np_fail + 1)); continue
    fi
    p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
    np_pass=$((np_pass + p)); np_fail=$((np_fail + f))
    if [ "$f" -gt 0 ] || ! grep -q '^1\.\.' "$log"; then
      echo "== -np $np rank $k"; cat "$log"
      grep -q '^1\.\.' "$log" || np_fail=$((np_fail + 1))
    fi
  done
  [ $rc -ne 0 ] && [ $np_fail -eq 0 ] && { echo "mpi-specs: mpirun -np $np exited with $rc"; np_fail=1; }
  pending=$(grep -c '# SKIP' "$logs/np$np.rank0.log" 2>/dev/null)
  echo "mpi-specs: -np $np: $np_pass passed, $np_fail failed over $np ranks ($pending pending in rank 0), $(( $(date +%s) - start )) s"
  pass=$((pass + np_pass)); fail=$((fail + np_fail))
done
echo "mpi-specs: $pass passed, $fail failed"
[ $fail -eq 0 ]
