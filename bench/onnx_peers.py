#!/usr/bin/python3
"""bench/onnx.sh's PyTorch side: torchvision resnet18 (the source module of
the ONNX file bench/onnx.sh times in luatf and ONNX Runtime), eval mode,
torch.no_grad, at the thread count given; median of 5 timed loops.
    /usr/bin/python3 bench/onnx_peers.py BATCH THREADS
Prints RESULT torch_t<THREADS>_resnet18_b<BATCH>_ms <ms>."""
import sys
import time

import torch
import torchvision

batch, threads = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(0)
m = torchvision.models.resnet18().eval()
x = torch.randn(batch, 3, 224, 224)
with torch.no_grad():
    m(x)
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            m(x)
        if time.perf_counter() - t0 > 0.2 or inner >= 64:
            break
        inner *= 2
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(inner):
            m(x)
        samples.append((time.perf_counter() - t0) / inner)
samples.sort()
print("RESULT torch_t%d_resnet18_b%d_ms %.2f" % (threads, batch, samples[2] * 1000))
