"""Reading a session's tokens is O(1): the projection vs folding the whole log.

Prints, per log size, the time of one read from ``UsageProjection`` and of the same figures
computed by aggregating every message, side by side, and their ratio. The projection's time should
stay flat as the log grows while the fold grows with it.
"""

from __future__ import annotations

from functools import partial

from django.contrib.auth import get_user_model
from django.db.models import Sum

from bench.timing import best_of
from host.log import append_message
from host.models import Message, Session
from host.usage import Usage, context_tokens, session_usage

SIZES = (100, 1_000, 5_000)


def _session_with(n: int) -> Session:
    user, _ = get_user_model().objects.get_or_create(username="bench")
    session = Session.objects.create(owner=user, title=f"bench {n}")
    for i in range(n):
        append_message(
            session,
            role="assistant",
            source_kind="assistant",
            content="x" * 200,
            usage=Usage(10 + i % 7, 20, 300, 5),
        )
    return session


def _fold(session: Session) -> tuple[int, int]:
    sums = Message.objects.filter(session=session).aggregate(
        a=Sum("uncached_input_tokens"),
        b=Sum("output_tokens"),
        c=Sum("cache_read_tokens"),
        d=Sum("cache_write_tokens"),
    )
    last = (
        Message.objects.filter(session=session, role="assistant", output_tokens__isnull=False)
        .order_by("-seq")
        .values_list("uncached_input_tokens", "cache_read_tokens", "cache_write_tokens")
        .first()
    )
    return sum(v or 0 for v in sums.values()), sum(v or 0 for v in last or ())


def _projection(session: Session) -> tuple[int, int]:
    return session_usage(session).total, context_tokens(session)


def run() -> None:
    """Print the side-by-side table for each log size."""
    print("token read: projection (O(1)) vs folding the log")
    print(f"{'messages':>9} {'projection µs':>14} {'fold µs':>10} {'fold/projection':>16}")
    for n in SIZES:
        session = _session_with(n)
        assert _fold(session) == _projection(session), "projection disagrees with the log"
        fast = best_of(partial(_projection, session))
        slow = best_of(partial(_fold, session))
        print(f"{n:>9} {fast * 1e6:>14.0f} {slow * 1e6:>10.0f} {slow / fast:>16.1f}")
