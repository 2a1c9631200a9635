"""A tiny timing helper shared by the benchmarks (best of N, seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 5, number: int = 20) -> float:
    """Return the best mean time of one call to ``fn`` in seconds over ``repeat`` rounds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best
