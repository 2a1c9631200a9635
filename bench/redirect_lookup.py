"""``destination()`` on the flattened redirect map vs walking an unflattened chain.

The map is flattened after every change (docs/spec.md, Forwarding and cycles), so the lookup is one
step whatever the chain's length; an unflattened chain of the same handoffs costs one step per
handoff.
"""

from __future__ import annotations

from functools import partial

from bench.timing import best_of
from handoff.core.redirects import RedirectGraph

LENGTHS = (10, 100, 1_000)


def run() -> None:
    """Print lookup times for chains of several lengths, flattened vs walked."""
    print("redirect destination(): flattened map vs unflattened chain")
    print(f"{'handoffs':>9} {'flat µs':>9} {'chain µs':>9} {'chain/flat':>11}")
    for n in LENGTHS:
        flat = RedirectGraph()
        for i in range(n):
            flat.add(f"s{i}", f"s{i + 1}")
        chain = RedirectGraph({f"s{i}": f"s{i + 1}" for i in range(n)})
        assert flat.destination("s0") == chain.destination("s0") == f"s{n}"
        fast = best_of(partial(flat.destination, "s0"), number=200)
        slow = best_of(partial(chain.destination, "s0"), number=200)
        print(f"{n:>9} {fast * 1e6:>9.2f} {slow * 1e6:>9.2f} {slow / fast:>11.1f}")
