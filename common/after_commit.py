"""After-commit work held until a run of transactions ends: ``held`` and ``hold``.

A writer that commits several transactions in a row, where readers should see only the end
(the handoff's route and its start: docs/spec.md, The transaction, step 8), runs them inside
``held()``. A call registered with ``transaction.on_commit`` that asks ``hold(call)`` when it
runs is then kept, not run, and runs when the block ends, after the last of them committed,
in the order the commits ran it; outside ``held()`` ``hold`` returns False and the call runs
at its commit as usual. A block left by an exception still runs what it holds (the
transactions that committed did commit). A held call that raises is logged with its traceback
and the others still run, as Django's ``on_commit(robust=True)`` does. The follower's
deliveries ask (``follower.events``): a page hears of the route and the start in one batch.

A process that dies inside the block leaves the held work undone as a death between a commit
and its ``on_commit`` does: what it would have done waits for the next such call (the
follower's next delivery to that user numbers every event stored before it).

The hold lives in a ``ContextVar``: each thread or task holds its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

logger = logging.getLogger(__name__)

_held: ContextVar[list[Callable[[], None]] | None] = ContextVar("after_commit", default=None)


@contextmanager
def held() -> Iterator[None]:
    """Keep the after-commit calls that ``hold`` themselves until the block ends; run them then,
    in order, each once (a failing one logged, the rest still run)."""
    calls: list[Callable[[], None]] = []
    token = _held.set(calls)
    try:
        yield
    finally:
        _held.reset(token)
        for call in calls:
            try:
                call()
            except Exception:
                logger.exception("held after-commit call %r failed", call)


def hold(call: Callable[[], None]) -> bool:
    """Keep ``call`` until the enclosing ``held()`` block ends and return True, or return False
    outside one (the caller runs it now)."""
    calls = _held.get()
    if calls is None:
        return False
    calls.append(call)
    return True
