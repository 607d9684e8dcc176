"""bench/sort_contraction_peers.py: the peers of bench/sort_contraction.lua (same sizes,
same method: median of 5 timed loops after a warm-up, GC off), on the same
threads (torch.set_num_threads = OMP_NUM_THREADS, default 2).
  torch_einsum_ms  torch.einsum "bij,bjk->bik" on (64, 128, 128) float32
  torch_bmm_ms     torch.bmm of the same operands
  torch_topk_ms    torch.topk(x, 10) on (1000, 10000) float32
  numpy_sort_ms    numpy.sort of 1,000,000 float32
"""
import gc
import os
import statistics
import time

import numpy as np
import torch
import os as _os, sys as _sys
_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from peer_timing import timed  # noqa: E402

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))




def result(name, secs):
    print("RESULT %s %.6g ms" % (name, secs * 1e3))


rng = np.random.default_rng(0)
a = torch.from_numpy(rng.random((64, 128, 128), dtype=np.float32))
b = torch.from_numpy(rng.random((64, 128, 128), dtype=np.float32))
result("torch_einsum_ms", timed(lambda: torch.einsum("bij,bjk->bik", a, b)))
result("torch_bmm_ms", timed(lambda: torch.bmm(a, b)))
x = torch.from_numpy(rng.random((1000, 10000), dtype=np.float32))
result("torch_topk_ms", timed(lambda: torch.topk(x, 10)))
v = rng.random(1000000, dtype=np.float32)
result("numpy_sort_ms", timed(lambda: np.sort(v)))
