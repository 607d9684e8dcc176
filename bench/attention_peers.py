"""bench/attention_peers.py: the peer of bench/attention.lua:
torch.nn.MultiheadAttention(128, 4, batch_first=True) on x (16, 64, 128),
self-attention, loss = output.sum(), backward to all weights and x (same
method as bench/timing.lua: median of 5 timed loops after a warm-up, GC
off). need_weights=False, PyTorch's fastest setting (no averaged
attention weights). Usage: python3 bench/attention_peers.py THREADS
  torch_mha_fwd_bwd_<T>t   ms per forward + backward
  torch_mha_fwd_<T>t       ms per forward (no grad)
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_timing import timed  # noqa: E402

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.set_num_threads(threads)
torch.manual_seed(1)
B, T, D, H = 16, 64, 128, 4
mha = torch.nn.MultiheadAttention(D, H, batch_first=True)
x = torch.randn(B, T, D, requires_grad=True)


def step():
    mha.zero_grad(set_to_none=True)
    x.grad = None
    out, _ = mha(x, x, x, need_weights=False)
    out.sum().backward()


def fwd():
    with torch.no_grad():
        mha(x, x, x, need_weights=False)


print("RESULT torch_mha_fwd_bwd_%dt %.6g ms" % (threads, timed(step) * 1e3))
print("RESULT torch_mha_fwd_%dt %.6g ms" % (threads, timed(fwd) * 1e3))
