"""bench/gpu_peers.py: PyTorch CUDA figures for bench/gpu.lua's work (raw
cuBLAS through torch.matmul), printed as "RESULT name value unit" lines;
without PyTorch or a GPU, "no GPU: skipped" and exit 0.
Each figure is the median of 5 timed loops of about 0.25 s after a warm-up,
torch.cuda.synchronize() ending each loop (bench/timing.lua's method)."""
import sys
import time

try:
    import torch
except ImportError:
    print("no GPU: skipped (no PyTorch)")
    sys.exit(0)
if not torch.cuda.is_available():
    print("no GPU: skipped")
    sys.exit(0)

dev = torch.device("cuda:0")
sync = torch.cuda.synchronize


def timed(fn, inner=None):
    fn(max(1, inner // 10) if inner else 1)
    sync()
    if inner is None:
        inner = 1
        while True:
            t0 = time.perf_counter()
            fn(inner)
            sync()
            if time.perf_counter() - t0 > 0.05:
                break
            inner *= 2
        inner = max(1, int(inner * 0.25 / 0.05))
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        fn(inner)
        sync()
        samples.append((time.perf_counter() - t0) / inner)
    samples.sort()
    return samples[2]


def result(name, value, unit):
    print("RESULT %s %.6g %s" % (name, value, unit))


def chain100(x):
    for i in range(100):
        k = i % 3
        x = x * 1.0001 if k == 0 else (x + 0.5 if k == 1 else torch.tanh(x))
    return x


with torch.no_grad():
    x = torch.eye(1000, device=dev)

    def mm_loop(n):
        y = x
        for _ in range(n):
            y = y @ y
    result("matmul_1000_loop", timed(mm_loop) * 1e6, "us")

    a = torch.randn(4096, 4096, device=dev)
    b = torch.randn(4096, 4096, device=dev)

    def mm(n):
        for _ in range(n):
            torch.matmul(a, b)
    result("matmul_4096_gflops", 2 * 4096 ** 3 / timed(mm) / 1e9, "GFLOP/s")

    s = torch.tensor(1.0, device=dev)

    def small(n):
        y = s
        for _ in range(n):
            y = y + 1
    result("small_op_eager", timed(small) * 1e6, "us")

    c = torch.rand(1024, 1024, device=dev)

    def eager(n):
        for _ in range(n):
            chain100(c)
    result("chain100_eager", timed(eager) * 1e6, "us")
    try:
        compiled = torch.compile(chain100)
        compiled(c)

        def fn(n):
            for _ in range(n):
                compiled(c)
        result("chain100_fn", timed(fn) * 1e6, "us")
    except Exception as e:  # no Triton / compiler on the machine
        print("# torch.compile unavailable: %s" % str(e).splitlines()[0][:100])

    n = 256 * 1024 * 1024
    u = torch.ones(n, device=dev)
    v = torch.ones(n, device=dev)

    def add(k):
        for _ in range(k):
            u + v
    result("add_1gib_bandwidth", 3 * 4 * n / timed(add, 5) / 1e9, "GB/s")
    w = torch.empty_like(u)

    def copy(k):
        for _ in range(k):
            w.copy_(u)
    result("copy_1gib_bandwidth", 2 * 4 * n / timed(copy, 5) / 1e9, "GB/s")
    del u, v, w

xb = torch.randn(256, 784, device=dev)
lab = torch.arange(256, device=dev) % 10
w1 = (torch.randn(784, 512, device=dev) * 0.05).requires_grad_()
b1 = torch.zeros(512, device=dev, requires_grad=True)
w2 = (torch.randn(512, 10, device=dev) * 0.05).requires_grad_()
b2 = torch.zeros(10, device=dev, requires_grad=True)


def mlp(n):
    for _ in range(n):
        h = torch.relu(xb @ w1 + b1)
        loss = torch.nn.functional.cross_entropy(h @ w2 + b2, lab)
        torch.autograd.grad(loss, [w1, b1, w2, b2])
result("mlp_step_b256", timed(mlp) * 1e6, "us")

# the classic MNIST convnet's training step at batch 256, as bench/gpu.lua's
# (PyTorch's native NCHW layout, cuDNN convolutions; SGD update in place)
xc = torch.rand(256, 1, 28, 28, device=dev)
labc = torch.arange(256, device=dev) % 10
k1 = (torch.randn(32, 1, 3, 3, device=dev) * 0.3).requires_grad_()
c1 = torch.zeros(32, device=dev, requires_grad=True)
k2 = (torch.randn(64, 32, 3, 3, device=dev) * 0.06).requires_grad_()
c2 = torch.zeros(64, device=dev, requires_grad=True)
wc = (torch.randn(1600, 10, device=dev) * 0.03).requires_grad_()
c3 = torch.zeros(10, device=dev, requires_grad=True)
cvars = [k1, c1, k2, c2, wc, c3]


def convnet(n):
    F = torch.nn.functional
    for _ in range(n):
        h = F.max_pool2d(torch.relu(F.conv2d(xc, k1, c1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, k2, c2)), 2)
        loss = F.cross_entropy(h.reshape(256, 1600) @ wc + c3, labc)
        grads = torch.autograd.grad(loss, cvars)
        with torch.no_grad():
            for v, g in zip(cvars, grads):
                v.sub_(g * 0.01)
result("convnet_step_b256", timed(convnet) * 1e6, "us")
