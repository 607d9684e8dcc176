"""bench/eager_peers.py: NumPy's side of bench/eager.lua (the per-op cost of
small eager ops), as the shared peers measure it (../shared/bench-peers,
small_op_us and chain100): a + b on 2x2 float32 in a plain loop, and the
100-op chain (x*1.0001, x+0.5, tanh, repeated) on 64 float32, per op.
Method: bench/peer_timing.py's timed_loop (as bench/timing.lua). Prints RESULT lines."""
import os as _os
import sys as _sys

import numpy as np

_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from peer_timing import timed_loop  # noqa: E402


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
    print("RESULT numpy_small_op_us %.6g us/op" % (timed_loop(add_loop, 100_000) * 1e6))
    chain = make_chain()
    x = np.random.rand(64).astype(np.float32)

    def chain_loop(n):
        for _ in range(n):
            chain(x)
    print("RESULT numpy_chain100_us_per_op %.6g us/op" % (timed_loop(chain_loop) * 1e6 / 100))


if __name__ == "__main__":
    main()
