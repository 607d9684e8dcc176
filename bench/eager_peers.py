"""bench/eager_peers.py: NumPy's side of bench/eager.lua (the per-op cost of
small eager ops), as the shared peers measure it (../shared/bench-peers,
small_op_us and chain100): a + b on 2x2 float32 in a plain loop, and the
100-op chain (x*1.0001, x+0.5, tanh, repeated) on 64 float32, per op.
Method as bench/timing.lua: median of 5 timed loops of about 0.25 s after a
warm-up; the collector is off inside a loop. Prints RESULT lines."""
import gc
import statistics
import time

import numpy as np


def timed(loop, inner=None):
    """Median seconds per iteration of loop(n)."""
    loop(1)
    if inner is None:
        inner = 1
        while True:
            t0 = time.perf_counter()
            loop(inner)
            if time.perf_counter() - t0 > 0.05:
                break
            inner *= 2
        inner = max(1, int(inner * 0.25 / 0.05))
    samples = []
    for _ in range(5):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        loop(inner)
        samples.append((time.perf_counter() - t0) / inner)
        gc.enable()
    return statistics.median(samples)


def make_chain(nops=100):
    lines = ["def chain(x):"]
    for i in range(nops):
        lines.append(("    x = x * 1.0001", "    x = x + 0.5", "    x = tanh(x)")[i % 3])
    lines.append("    return x")
    ns = {"tanh": np.tanh}
    exec("\n".join(lines), ns)  # noqa: S102 - generated benchmark code
    return ns["chain"]


def main():
    a = np.random.rand(2, 2).astype(np.float32)
    b = np.random.rand(2, 2).astype(np.float32)

    def add_loop(n):
        for _ in range(n):
            a + b
    print("RESULT numpy_small_op_us %.6g us/op" % (timed(add_loop, 100_000) * 1e6))
    chain = make_chain()
    x = np.random.rand(64).astype(np.float32)

    def chain_loop(n):
        for _ in range(n):
            chain(x)
    print("RESULT numpy_chain100_us_per_op %.6g us/op" % (timed(chain_loop) * 1e6 / 100))


if __name__ == "__main__":
    main()
