"""bench/peer_timing.py: the timing method of the Python peers, the same as
bench/timing.lua's: median of 5 timed loops of about 0.25 s after a warm-up;
the collector is off inside a loop (as the shared peers do)."""
import gc
import statistics
import time


def timed_loop(loop, inner=None):
    """Median seconds per iteration of loop(n), which runs its body n times
    (for bodies so small that calling a function per iteration would
    dominate); 'inner' iterations per timed loop, chosen so a loop lasts
    about 0.25 s when not given."""
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


def timed(fn, inner=None):
    """Median seconds per call of fn()."""
    def loop(n):
        for _ in range(n):
            fn()
    return timed_loop(loop, inner)
