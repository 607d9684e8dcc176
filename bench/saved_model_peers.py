# bench/saved_model_peers.py: the peer of bench/saved_model.lua: the same
# MNIST convnet in PyTorch, saved as TorchScript (torch.jit.script +
# torch.jit.save: graph and weights in one file, loadable from C++ without
# Python's source) and loaded with torch.jit.load; median of RUNS loads.
#   python3 bench/saved_model_peers.py [DIR] [RUNS]
import os, sys, time
import torch
import torch.nn as nn

d = sys.argv[1] if len(sys.argv) > 1 else "/tmp/luatf-bench-saved-model-torch"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
os.makedirs(d, exist_ok=True)
torch.set_num_threads(2)
model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(1600, 10), nn.Softmax(dim=1)).eval()
path = os.path.join(d, "mnist.pt")
torch.jit.save(torch.jit.script(model), path)
times = []
for r in range(runs + 1):
    t = time.perf_counter()
    m = torch.jit.load(path)
    times.append(time.perf_counter() - t)
first = times.pop(0)
times.sort()
print("torch.jit.load (first)             %8.2f ms" % (first * 1e3))
print("torch.jit.load (median of %d)      %8.2f ms" % (runs, times[(len(times) - 1) // 2] * 1e3))
