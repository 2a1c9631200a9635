"""What one handoff costs: the attempt with the offline summarizer vs a bare ORM write.

Prints, per log size (100 and 5 000 messages), the time of one manual handoff (the eight steps,
``handoff.attempt.run``) next to the time of the bare ORM baseline (create a session and insert
one message: two ``INSERT`` statements, each committed), their ratio, and the SQL statements,
writes and transactions the handoff ran (counted with ``CaptureQueriesContext``). Statements are
every one sent to the database: the queries, the ``SAVEPOINT`` /
``RELEASE`` of nested ``atomic`` blocks (also printed on their own) and the ``BEGIN`` / ``COMMIT``
of each transaction (psycopg sends ``BEGIN`` itself, and Django commits on the driver: neither
passes the captured cursor, so they are counted per transaction). Targets: at most 3× the
baseline, the same count at both sizes.

The floor column shows what the handoff's writes alone cost: as many bare single-row INSERTs
as it writes, grouped in as many transactions, with no read, check or Python around them. The
seed's steps need those writes (a record and its phases, the successor with its settings and
seed, the redirect, the main states, the notice, the start, one follower event per change a
page shows), so no handoff can cost less than the floor.

The handoff's time includes the follower's deliveries after its commits (``delivery ms``:
numbering its events and rendering their rows and fragments from the committed state,
``follower.events.deliver``); ``own ms`` is the rest, the handoff's own transactions, and
``own/floor`` their ratio to the floor. ``sql ms`` is the handoff's own statements (its
deliveries' left out), recorded once and sent again bare through the cursor on a fresh source
(``bench.sql_replay``): what the database costs for its SQL, without the ORM's query building
and the attempt's Python; ``sql/floor`` its ratio to the floor.

Last, the offline summary alone (target: at 5 000 messages at most 1.5× its time at 100):
with the digest the session's idles keep (``handoff.digest.per_session``), and with none kept.

It runs on the benchmark's database: SQLite by default, PostgreSQL when ``DATABASE_URL`` names
one (``DATABASE_URL=postgres://… make bench``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, reset_queries, transaction
from django.db.models import Sum
from django.db.models.functions import Length
from django.test.utils import CaptureQueriesContext

from bench import sql_replay
from bench.sql_replay import NOT_WRITES, TransactionCounter
from follower import events
from handoff import attempt, services, store, summarizer
from handoff.digest import per_session
from handoff.models import SummaryDigest
from host import log
from host.models import Message, Session, UsageProjection
from host.sessions import create_session

SIZES = (100, 5_000)
ROUNDS = 7
BASELINES_PER_ROUND = 3
CWD = "/work/bench"
MODEL = "claude-sonnet-4-5"


def _user() -> Any:
    user, _ = get_user_model().objects.get_or_create(username="bench-handoff")
    return user


def _message(session: Session, seq: int, turn: int, answer: bool) -> Message:
    """A user request of exchange ``turn``, or the answer to it carrying usage."""
    if not answer:
        text = f"Please refactor {CWD}/src/module_{turn}.py so it streams; keep the API as is."
        return Message(session=session, seq=seq, role="user", source_kind="user", content=text)
    return Message(
        session=session,
        seq=seq,
        role="assistant",
        source_kind="assistant",
        content=f"Done: {CWD}/src/module_{turn}.py streams now. Next I will run the tests.",
        uncached_input_tokens=20_000 + seq,
        output_tokens=200,
        cache_read_tokens=0,
        cache_write_tokens=0,
    )


def source_with(messages: int) -> Session:
    """Return an idle main with ``messages`` log entries (requests and answers, alternately)
    whose manual handoff is requested.

    The log is bulk-inserted and the session row, usage projection and kept digest are set to
    what appending it one message at a time would have left (revision, turns, the four
    buckets; the digest each idle folds the log into, ``handoff.digest.per_session``), so the
    handoff finds what a handoff at an idle finds.
    """
    session = create_session(_user(), cwd=CWD, title=f"bench {messages}")
    log.select_model(session, MODEL)
    first = session.revision + 1
    Message.objects.bulk_create(
        [_message(session, first + i, i // 2, i % 2 == 1) for i in range(messages)],
        batch_size=500,
    )
    sums = Message.objects.filter(session=session).aggregate(
        a=Sum("uncached_input_tokens"), b=Sum("output_tokens"), chars=Sum(Length("content"))
    )
    last = Message.objects.filter(session=session, role="assistant").order_by("-seq").first()
    UsageProjection.objects.filter(session=session).update(
        uncached_input_tokens=sums["a"] or 0,
        output_tokens=sums["b"] or 0,
        context_tokens=last.uncached_input_tokens if last else 0,
        context_seq=last.seq if last else 0,
        effective_chars=sums["chars"] or 0,
    )
    Session.objects.filter(pk=session.pk).update(
        revision=first + messages - 1, turns=messages // 2, blank=False
    )
    store.update_main_state(session.pk, requested=True)
    session.refresh_from_db()
    per_session.refresh(session, _controller())  # what its last idle left (``on_session_idle``)
    return session


def _controller() -> services.SessionController:
    """The session controller the handoff uses (the benchmark's settings name one)."""
    host = services.session_controller()
    assert host is not None
    return host


def handoff(session: Session) -> attempt.AttemptOutcome:
    """Run the manual attempt on ``session``; raise unless it ends ``started``."""
    outcome = attempt.run(session.pk, manual=True)
    if outcome.outcome is not attempt.Outcome.STARTED:
        raise RuntimeError(f"the benchmark's handoff ended {outcome.outcome}: {outcome.detail}")
    return outcome


def baseline() -> None:
    """The bare ORM write: create a session, insert one message (two autocommitted INSERTs)."""
    session = Session.objects.create(owner=_user(), cwd=CWD, title="baseline", blank=True)
    Message.objects.create(session=session, seq=1, role="user", source_kind="plugin", content="x")


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


_SAVEPOINTS = ("SAVEPOINT", "RELEASE", "ROLLBACK TO")


@dataclass(frozen=True)
class Count:
    """The SQL an action sent: every statement (savepoints and transaction control included),
    of which savepoints (``SAVEPOINT``, ``RELEASE``, ``ROLLBACK TO``) and writes, and its
    transactions."""

    statements: int
    savepoints: int
    writes: int
    transactions: int


def statements_of(action: Callable[[], object]) -> Count:
    """Return what ``action`` sends, counted."""
    reset_queries()  # a full query log (DEBUG) would leave nothing to capture
    with CaptureQueriesContext(connection) as captured, TransactionCounter() as transactions:
        action()
    sent = [q["sql"].lstrip().upper() for q in captured.captured_queries]
    savepoints = [sql for sql in sent if sql.startswith(_SAVEPOINTS)]
    writes = [sql for sql in sent if not sql.startswith(NOT_WRITES)]
    # Not on the captured cursor: each transaction's COMMIT, and psycopg's own BEGIN.
    uncaptured = transactions.blocks * (2 if connection.vendor == "postgresql" else 1)
    return Count(len(sent) + uncaptured, len(savepoints), len(writes), transactions.count)


def floor(count: Count) -> None:
    """The handoff's writes alone, as bare ORM writes: as many single-row INSERTs as it writes
    rows, in as many transactions (no reads, no checks, no Python around them)."""
    session = Session.objects.create(owner=_user(), cwd=CWD, title="floor", blank=True)
    per_transaction = -(-count.writes // count.transactions)
    for start in range(0, count.writes, per_transaction):
        with transaction.atomic():
            for seq in range(start, min(start + per_transaction, count.writes)):
                Message.objects.create(
                    session=session, seq=seq + 1, role="user", source_kind="plugin", content="x"
                )


class DeliveryClock:
    """Adds up the seconds spent in ``follower.events.deliver`` while in effect (the
    after-commit calls find the function by its module's name); ``inside`` says whether a
    delivery is running now."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.inside = False
        self._deliver = events.deliver

    def __enter__(self) -> DeliveryClock:
        real, clock = self._deliver, self

        def timed(user_id: int) -> list[dict[str, Any]]:
            start, clock.inside = time.perf_counter(), True
            try:
                return real(user_id)
            finally:
                clock.seconds += time.perf_counter() - start
                clock.inside = False

        events.deliver = timed
        return self

    def __exit__(self, *exc: object) -> None:
        events.deliver = self._deliver


@dataclass(frozen=True)
class Result:
    """Best seconds of one handoff (and of it, the follower's deliveries), of its own
    statements sent bare (``sql``), the baseline and the writes-only floor, and the count."""

    handoff: float
    delivery: float
    sql: float
    baseline: float
    floor: float
    count: Count


def _timed_handoff(source: Session) -> tuple[float, float]:
    """Seconds of one handoff of ``source`` and, of them, of the follower's deliveries."""
    with DeliveryClock() as clock:
        spent = _timed(partial(handoff, source))
    return spent, clock.seconds


def recorded(source: Session) -> sql_replay.Recording:
    """The statements one handoff of ``source`` sends itself (its deliveries' left out)."""
    with DeliveryClock() as clock:
        return sql_replay.record(partial(handoff, source), leave_out=lambda: clock.inside)


def measure(messages: int) -> Result:
    """Measure one log size. Handoffs, their statements replayed bare, baselines and floors
    alternate, so a machine busy with other work slows them alike; the best of each is kept
    (the handoff with its deliveries)."""
    sources = [source_with(messages) for _ in range(ROUNDS + 2)]
    counted, taped = sources.pop(), sources.pop()
    count = statements_of(partial(handoff, counted))
    recording = recorded(taped)
    spent: list[tuple[float, float]] = []
    bare, least, replayed = [], [], []
    for source in sources:
        bare += [_timed(baseline) for _ in range(BASELINES_PER_ROUND)]
        least.append(_timed(partial(floor, count)))
        spent.append(_timed_handoff(source))
        replayed.append(_timed(recording.replay({taped.pk: source_with(messages).pk})))
        events.deliver(_user().pk)  # the replay's events, so the next handoff delivers its own
    best, delivery = min(spent)
    return Result(best, delivery, min(replayed), min(bare), min(least), count)


def run() -> None:
    """Print the side-by-side table for each log size."""
    vendor = connection.vendor
    print(f"handoff cost on {vendor}: one offline handoff vs create session + insert message")
    print("  (floor: the handoff's own writes as bare single-row INSERTs, same transactions;")
    print("   sql: the handoff's own statements, recorded, sent again through the cursor)")
    print(
        f"{'messages':>9} {'handoff ms':>11} {'delivery ms':>12} {'own ms':>8} "
        f"{'baseline ms':>12} {'ratio':>6} {'floor ms':>9} {'floor ratio':>12} "
        f"{'own/floor':>10} {'sql ms':>7} {'sql/floor':>10} {'statements':>11} "
        f"{'savepoints':>11} {'writes':>7} {'transactions':>13}"
    )
    handoff(source_with(2))  # the first attempt of a process creates the settings row
    for n in SIZES:
        r = measure(n)
        own = r.handoff - r.delivery
        print(
            f"{n:>9} {r.handoff * 1e3:>11.2f} {r.delivery * 1e3:>12.2f} {own * 1e3:>8.2f} "
            f"{r.baseline * 1e3:>12.2f} {r.handoff / r.baseline:>6.1f} {r.floor * 1e3:>9.2f} "
            f"{r.floor / r.baseline:>12.1f} {own / r.floor:>10.1f} {r.sql * 1e3:>7.2f} "
            f"{r.sql / r.floor:>10.2f} {r.count.statements:>11} "
            f"{r.count.savepoints:>11} {r.count.writes:>7} {r.count.transactions:>13}"
        )
    summary_scaling()


def summary_time(source: Session, *, kept: bool) -> float:
    """Best seconds of the offline summary of ``source`` (the summarize step's work:
    ``summarizer.summarize_session``) over ``ROUNDS`` runs: with the digest its idles keep
    (``kept``: read it and the entries after it, build the brief, store it), or with none (read
    the whole effective context, digest it, build the brief, store the digest)."""
    host = _controller()
    spent = []
    for _ in range(ROUNDS):
        if not kept:
            SummaryDigest.objects.filter(session_id=source.pk).delete()
        spent.append(_timed(partial(summarizer.summarize_session, source, host)))
    return min(spent)


def summary_scaling() -> None:
    """Print the offline summary's time at each log size and the largest size's ratio to the
    smallest's (the target: at most 1.5×), measured side by side: with the digest the
    session's idles keep (as a handoff finds it), and with none (the first summary of a log
    whose digest was never kept, e.g. just imported)."""
    sources = {n: source_with(n) for n in SIZES}
    print(
        "offline summary (read the kept digest and the log after it, build the brief), best of",
        ROUNDS,
    )
    print(f"{'messages':>9} {'kept ms':>11} {'none ms':>11}")
    kept = {n: summary_time(sources[n], kept=True) for n in SIZES}
    cold = {n: summary_time(sources[n], kept=False) for n in SIZES}
    for n in SIZES:
        print(f"{n:>9} {kept[n] * 1e3:>11.2f} {cold[n] * 1e3:>11.2f}")
    print(
        f"  {SIZES[-1]} / {SIZES[0]} messages: {kept[SIZES[-1]] / kept[SIZES[0]]:.1f}× kept, "
        f"{cold[SIZES[-1]] / cold[SIZES[0]]:.1f}× none"
    )
