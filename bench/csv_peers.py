# bench/csv_peers.py: the same CSV (bench/csv.lua writes it) read by Python:
# the csv module with float(), and numpy.loadtxt (Debian's python3-numpy);
# best of 3, wall clock; MB/s of file bytes.
import csv, os, sys, time
path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/luatf-bench/csv_1m.csv"
mb = os.path.getsize(path) / 1e6
def best(fn):
    b = 1e9
    for _ in range(3):
        t0 = time.perf_counter(); fn(); b = min(b, time.perf_counter() - t0)
    return b
def pycsv():
    with open(path, newline="") as f:
        return sum(1 for row in csv.reader(f) if [float(x) for x in row])
t = best(pycsv)
print("RESULT python_csv_module_MBps %.1f" % (mb / t))
try:
    import numpy as np
    t = best(lambda: np.loadtxt(path, delimiter=",", dtype=np.float32))
    print("RESULT numpy_loadtxt_MBps %.1f" % (mb / t))
except ImportError:
    pass
