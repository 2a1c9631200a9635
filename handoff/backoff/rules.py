"""How long automatic handoff waits after failures (docs/spec.md, Switches); plain Python, no
Django (the pure-core contract in pyproject.toml covers it).

The wait is kept outside ``handoffTrigger``.

A failed automatic attempt is retried at the next revision; a model that keeps failing
would then be called after every turn. The wait doubles with each automatic failure in a row
and stops doubling at a cap: ``base``, ``2·base``, ``4·base`` … ``cap`` seconds.
"""

from __future__ import annotations


def delay(failures: int, *, base: float, cap: float) -> float:
    """Return the seconds to wait after ``failures`` automatic failures in a row.

    ``base · 2^(failures − 1)``, at most ``cap``; 0 when nothing failed. Raises ``ValueError``
    for a negative count.
    """
    if failures < 0:
        raise ValueError(f"failures must be 0 or more, not {failures}")
    if failures == 0:
        return 0.0
    return float(min(cap, base * 2 ** min(failures - 1, 62)))
