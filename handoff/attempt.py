"""The eight-step transaction (docs/spec.md, The transaction; Failure outcomes).

``run(session_id, manual=...)`` runs guard → metrics → reason → blockers → mark_attempt →
summarize → prepare → commit, one function each, each recording its outcome in the attempt's
steps and returning what the next one needs as a typed value: ``Guarded`` (step 1),
``Measured`` (2), a ``Reason`` (3), the ``Attempt`` holding its record (5), a ``Summary`` (6),
the draft (7). Steps 1–4 read the stability conditions fresh (the session and its blocker facts
once, in step 1) and end the attempt without a record (``Stop``); from step 5 on a failure
fails the record (``Fail``) and every step re-checks ``stable()``
(``handoff.core.stability``) from storage, so a toggle, a new message or a new blocker during
summarizing ends the attempt ``failed`` cleanly. The claim (step 5) and the seed re-read the
session with its blockers (one ``SessionController.observe``), the main state and, for an
automatic attempt, the settings; the check after the summary and the commit's last one (under
the main state's lock) are carried by the record's own conditional move, to ``prepared`` and to
``committed`` (``stable_rows``: one statement, nothing can change between the check and the
move), and the source is observed only when one fails, to say why. The writes are grouped into
few transactions: mark, prepare (brief, draft, inheritance), seed, route, start.

Failure outcomes (docs/spec.md, Failure outcomes):

| failure point                        | phase                   | consequence                |
|--------------------------------------|-------------------------|----------------------------|
| guard, blockers, no trigger          | (no record)             | blockers into ``deferred`` |
| summarize throws / brief invalid     | failed                  | source untouched           |
| source changed before seed           | failed                  | draft archived             |
| seed flush fails                     | failed                  | draft discarded, no route  |
| source changed before commit         | failed                  | draft discarded            |
| redirect throws                      | failed                  | draft discarded            |
| start throws                         | committed-start-pending | successor id kept          |
| its own runtime starts the successor | committed               | started at its first turn  |

Review sits between prepare and commit (docs/design.md, Review sits between `prepare` and
`commit`): when the main or the settings ask for it, step 7 also records ``review_until`` (how
long the review may wait) and the attempt ends there, ``prepared``, until ``commit_review`` runs
step 8 with the edited brief (the same re-checks: input that arrived meanwhile fails it) or
``handoff.review`` discards it.

A draft is discarded (archived, nothing else) only while it is an unwoken draft this attempt
created. The summary runs outside any database transaction. Two attempts on one source end in
at most one successor: step 5 claims the source under a row lock on its main state.

Every write of a record or a main state goes through ``handoff.store``; the draft is discarded
by ``handoff.recovery.discard_draft``, as recovery and review discard it.

``fault_hook`` is the fault-injection seam: it is sent at each named point with the attempt,
and an exception a receiver raises counts as that point failing (points: ``summarize``,
``before_seed``, ``flush``, ``before_commit``, ``redirect``, ``start``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any, TypeVar

from django.db import DatabaseError, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.lookups import Exact, GreaterThanOrEqual
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext_noop

from common import after_commit
from common.reads import reads_once
from handoff import (
    conf,
    degradation,
    inheritance,
    metrics,
    recovery,
    services,
    store,
    summarizer,
)
from handoff.backoff import wait
from handoff.core.blockers import CUSTOM_PRESET, BlockerFacts, find_blockers
from handoff.core.brief import BriefError, render_brief
from handoff.core.guard import (
    ALREADY_REDIRECTED,
    MESSAGES,
    NOT_A_MAIN,
    NOT_IDLE,
    GuardFacts,
    guard_refusal,
)
from handoff.core.naming import handed_off_title
from handoff.core.phases import Phase, Reason
from handoff.core.redirects import RedirectError
from handoff.core.stability import StabilityFacts, instability
from handoff.core.steps import CommitStep, Step, decide_reason
from handoff.core.tokens import TokenLabel, TokenReading
from handoff.core.trigger import Metrics, threshold
from handoff.exceptions import HandoffError, PhaseError
from handoff.models import HandoffRecord, MainState
from handoff.services import (
    PRODUCT_RUNTIME,
    HostSession,
    ObservedRows,
    SessionController,
    SessionObservation,
)
from handoff.settings_store import SettingsValues
from handoff.status import record_dict

logger = logging.getLogger(__name__)
T = TypeVar("T")

fault_hook = Signal()  # sent as fault_hook.send(sender=Attempt, point=str, attempt=Attempt)

# Host session status values the engine reads (host-agnostic strings).
# The notice the commit leaves on the source (in the log's English; the pages translate it,
# ``handoff.words.log``).
RELAY_NOTICE = gettext_noop(
    "Handed off to %(named)s. This conversation is now a relay: new input is forwarded there."
)
IDLE = "idle"
DISPOSED = "disposed"


class Outcome(StrEnum):
    """How an attempt ended."""

    STARTED = "started"
    COMMITTED = "committed"
    COMMITTED_START_PENDING = "committed-start-pending"
    WAITING_FOR_REVIEW = "prepared"
    FAILED = "failed"
    DEFERRED = "deferred"
    REFUSED = "refused"
    NO_TRIGGER = "no-trigger"


@dataclass(frozen=True)
class StepResult:
    """One step's recorded outcome: its name, whether it passed, and what happened."""

    step: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class Guarded:
    """Step 1's answer: a registered main the guard lets through.

    ``controller``: the session controller it found; ``observation``: the source with its
    blocker facts, read once; ``state``: its main state; ``revision``: the source's revision
    then (its log's sequence number).
    """

    controller: SessionController
    observation: SessionObservation
    state: MainState
    revision: int


@dataclass(frozen=True)
class Measured:
    """Step 2's answer: the settings read now, the trigger's metrics (tokens, turns,
    compactions, capacity) and the token reading they were taken from."""

    values: SettingsValues
    metrics: Metrics
    reading: TokenReading


@dataclass(frozen=True)
class Claim:
    """What every ``stable()`` re-check of an attempt compares with: the source's id, whether the
    attempt is manual, the session controller, the attempt's reason and the revision it runs at.
    """

    session_id: str
    manual: bool
    controller: SessionController
    reason: Reason
    revision: int


@dataclass
class Attempt:
    """An attempt holding a record (steps 5–8), as the fault hook's receivers see it.

    ``record``: the record as last moved; ``draft``: the successor step 7 created (``None``
    before it, and when step 7 failed and rolled it back); ``routed``: step 8 installed the
    route; ``steps``: what each step recorded so far.
    """

    claim: Claim
    record: HandoffRecord
    steps: list[StepResult]
    draft: HostSession | None = None
    routed: bool = False

    @property
    def session_id(self) -> str:
        """The source's id."""
        return self.claim.session_id

    @property
    def host(self) -> SessionController:
        """The session controller the guard found."""
        return self.claim.controller

    def note(self, step: str, detail: str = "", ok: bool = True) -> None:
        """Record a step's outcome."""
        self.steps.append(StepResult(step, ok, detail))


@dataclass(frozen=True)
class Summary:
    """Step 6's answer: the validated brief, and the source as step 5's check read it (the
    revision it was written at)."""

    brief: dict[str, Any]
    source: HostSession


@dataclass(frozen=True)
class AttemptOutcome:
    """How an attempt ended, with its record (when one was made) and the steps it went through.

    ``blockers`` is set when the attempt was deferred.
    """

    outcome: Outcome
    session: str
    detail: str
    record: HandoffRecord | None = None
    blockers: list[str] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when a successor exists (started, start pending, or committed and waiting for
        its runtime to show its first turn)."""
        return self.outcome in (
            Outcome.STARTED,
            Outcome.COMMITTED,
            Outcome.COMMITTED_START_PENDING,
        )

    def as_dict(self) -> dict[str, Any]:
        """Return ``{"outcome", "session", "detail", "blockers", "record", "steps"}``."""
        return {
            "outcome": str(self.outcome),
            "session": self.session,
            "detail": self.detail,
            "blockers": list(self.blockers),
            "record": record_dict(self.record) if self.record is not None else None,
            "steps": [{"step": s.step, "ok": s.ok, "detail": s.detail} for s in self.steps],
        }


class Stop(Exception):
    """Ends an attempt before a record exists (refused, no trigger, deferred).

    ``keeps_request``: the main's ``requested`` stays set (a deferral waits for its blockers;
    a refusal because another attempt is in progress leaves the request to that attempt).
    """

    def __init__(
        self,
        outcome: Outcome,
        detail: str,
        blockers: list[str] | None = None,
        *,
        keeps_request: bool = False,
    ) -> None:
        super().__init__(detail)
        self.outcome = outcome
        self.detail = detail
        self.blockers = blockers or []
        self.keeps_request = keeps_request
        self.steps: list[StepResult] = []  # what steps 1–5 recorded, set as it leaves them


class Fail(Exception):
    """Ends an attempt that has a record: the record becomes ``failed``.

    ``changed``: the source changed under the attempt (``stable()`` failed), which is no fault
    of the attempt and starts no backoff (``handoff.backoff.wait``).
    """

    def __init__(self, step: str, detail: str, *, changed: bool = False) -> None:
        super().__init__(f"{step}: {detail}")
        self.step = step
        self.detail = detail
        self.changed = changed


def _said(exc: Exception) -> str:
    """Return ``Type: message`` of ``exc``, the failed step's words on the record's error.

    A database error says what the database refused (psycopg's primary message, and its detail),
    never the statement: psycopg's own text quotes it (``LINE 1: UPDATE …``), which tells a
    user nothing and shows the stored data.
    """
    diag = getattr(exc.__cause__, "diag", None) if isinstance(exc, DatabaseError) else None
    if diag is not None and diag.message_primary:
        detail = f" ({diag.message_detail})" if diag.message_detail else ""
        return f"{type(exc).__name__}: {diag.message_primary}{detail}"
    return f"{type(exc).__name__}: {exc}"


EXPECTED_FAILURES = (HandoffError, BriefError, RedirectError)
"""The engine's own refusals (a service left out, a brief that breaks the schema, a redirect
the graph refuses): their message on the record says all there is, so they are not logged."""


def _failed(step: str, exc: Exception, context: str = "") -> Fail:
    """Return the ``Fail`` of ``step`` caused by ``exc`` (its words after ``context``).

    This is where an exception becomes a failed attempt, so an unexpected one (anything but
    ``EXPECTED_FAILURES``: a bug, an outage, the model's endpoint) is logged here, once, at
    ERROR with its traceback (docs/spec.md, Failure outcomes).
    """
    if not isinstance(exc, EXPECTED_FAILURES):
        logger.error("handoff step %s failed", step, exc_info=exc)
    return Fail(step, f"{context}{_said(exc)}")


class Unstable(Exception):
    """``stable()`` failed on a re-check (docs/spec.md, Stability); the message says why."""


def _point(attempt: Attempt, point: str) -> None:
    fault_hook.send(sender=Attempt, point=point, attempt=attempt)


# --- reading the facts ---------------------------------------------------------------------


def blocker_facts(observed: SessionObservation) -> BlockerFacts:
    """Return the blocker facts of an observed session (docs/spec.md, Deferral)."""
    return BlockerFacts(
        activities=list(observed.activities),
        live_owned_agents=list(observed.live_subagents),
        team_members=observed.team_members,
        pending_inbox=observed.pending_inbox,
        permission_preset=observed.session.permission_preset,
    )


def stable_source(claim: Claim, state: MainState | None = None) -> HostSession:
    """Re-check ``stable()`` from storage and return the source as read now; raise
    ``Unstable`` (saying why) when it fails.

    Reads what the claim's reason needs: the session with its blockers (one
    ``SessionController.observe``), the main state (none when the caller holds it locked and
    passes it), and the settings only for an automatic attempt (a manual one does not depend on
    ``autoHandoff``).
    """
    observed = claim.controller.observe(claim.session_id)
    if observed is None:
        raise Unstable("the session no longer exists")
    source = observed.session
    if state is None:
        state = store.find_main_state(claim.session_id)
    automatic = claim.reason is not Reason.MANUAL
    facts = StabilityFacts(
        disposed=source.status == DISPOSED,
        idle=source.status == IDLE,
        revision=int(source.revision),
        archived=bool(source.archived),
        blockers=find_blockers(blocker_facts(observed), manual=claim.manual),
        auto_handoff=automatic and services.load_settings().auto_handoff,
        enabled=bool(state and state.enabled),
        requested=bool(state and state.requested),
    )
    why = instability(facts, revision=claim.revision, reason=claim.reason)
    if why is not None:
        raise Unstable(why)
    return source


def _check(attempt: Attempt, step: str, state: MainState | None = None) -> HostSession:
    """``stable_source`` for a step that has a record: instability fails it (``changed``)."""
    try:
        return stable_source(attempt.claim, state)
    except Unstable as why:
        raise Fail(step, f"not stable: {why}", changed=True) from why


def stable_rows(
    claim: Claim, state: MainState | None = None
) -> QuerySet[HandoffRecord, HandoffRecord] | None:
    """Return the records whose source is ``stable()`` for ``claim``, a queryset a write can
    carry (``store.move``'s ``among``), or ``None`` when it cannot be said so (the controller
    is no ``ObservedRows``) or fails already on what is known here.

    The same rule as ``stable_source`` (``instability`` and ``find_blockers``): the record's
    source idle (so not disposed), at the revision the record was claimed at (its
    ``source_revision``, the claim's), not archived, nothing in flight, no live subagent, a team
    of at most one, nothing pending in its inbox, not a custom permission preset unless the
    attempt is manual; the claim's switch on in the main state (read in the condition, or
    ``state`` as the caller holds it locked). An automatic attempt reads the settings'
    ``autoHandoff`` here. The condition names the source and the revision by the record's own
    columns, so it is built once per process for each kind of claim (``_stable_records``).
    """
    controller = claim.controller
    if not isinstance(controller, ObservedRows):
        return None
    switch = "requested" if claim.reason is Reason.MANUAL else "enabled"
    if claim.reason is not Reason.MANUAL and not services.load_settings().auto_handoff:
        return None
    if state is not None and not getattr(state, switch):
        return None
    kind = (type(controller), claim.manual, switch, state is None)
    if kind not in _STABLE_RECORDS:
        _STABLE_RECORDS[kind] = _stable_records(controller, claim.manual, switch, state is None)
    return _STABLE_RECORDS[kind]


_STABLE_RECORDS: dict[tuple[type, bool, str, bool], QuerySet[HandoffRecord, HandoffRecord]] = {}
"""``_stable_records`` built so far, by controller class, manual, switch and whether the main
state is read in the condition."""


def _stable_records(
    controller: ObservedRows, manual: bool, switch: str, read_state: bool
) -> QuerySet[HandoffRecord, HandoffRecord]:
    """The records whose source is stable (``stable_rows``), resolved once: a move filters a
    clone of it by the record's id.

    Each subquery (the counts, the main state's switch, the source's row) stands on the right
    of its comparison (``0 = open_activities``, ``TRUE = EXISTS(…)``): Django resolves a
    lookup's left side again each time it compiles the statement (``Lookup.process_lhs``),
    which clones a subquery with all it holds, and compiles the right side as resolved here.
    """
    quiet = Q(
        _none("open_activities"),
        _none("live_subagent_count"),
        GreaterThanOrEqual(Value(1), F("team_members")),
        _none("pending_inbox_count"),
        status=IDLE,
        revision=OuterRef("source_revision"),
        archived=False,
    )
    if not manual:
        quiet &= ~Q(permission_preset=CUSTOM_PRESET)
    rows = controller.observed_rows(OuterRef("source_id")).filter(quiet)
    if read_state:
        on = MainState.objects.filter(session_id=OuterRef("pk"), **{switch: True})
        rows = rows.filter(_holds(Exists(on)))
    return HandoffRecord.objects.filter(_holds(Exists(rows)))


def _none(count: str) -> Exact:
    """``0 = count``: the annotated ``count`` is 0, the subquery on the right."""
    return Exact(Value(0), F(count))


def _holds(condition: Exists) -> Exact:
    """``TRUE = condition``: ``condition`` holds, the subquery on the right."""
    return Exact(Value(True), condition)


def _moved_while_stable(
    attempt: Attempt, step: str, phase: Phase, state: MainState | None = None, **fields: Any
) -> HandoffRecord:
    """Move the record to ``phase`` (``store.move``) only while ``stable()`` holds: one
    conditional UPDATE carrying the check (``stable_rows``), so nothing can change between the
    check and the move. When it fails, the source is observed to say why and the step fails
    (``changed``); the caller's transaction rolls back what it wrote. Without ``stable_rows``,
    one ``_check`` before the move."""
    stable = stable_rows(attempt.claim, state)
    if stable is None:
        _check(attempt, step, state)
        return store.move(attempt.record, phase, **fields)
    try:
        return store.move(attempt.record, phase, among=stable, **fields)
    except store.Unmet as unmet:
        _check(attempt, step, state)
        raise Fail(step, "not stable: the source changed meanwhile", changed=True) from unmet


# --- steps 1–5: up to the record ------------------------------------------------------------


def guard(session_id: str, steps: list[StepResult], *, manual: bool) -> Guarded:
    """Step 1: a registered main, idle, not archived, not a subagent, no redirect yet; a
    session another runtime runs without the product's hooks only when asked (``manual``:
    nothing tells the product its idle point, nor the user in its terminal).

    A manual request refused because the session is not idle stays ``requested``: the next
    ``session_idle`` evaluation runs it (no mid-turn migration: it waits for idle; docs/spec.md,
    Switches).
    """
    controller = services.session_controller()
    if controller is None:
        raise Stop(Outcome.REFUSED, degradation.NO_CONTROLLER_REFUSAL)
    observed = controller.observe(session_id)
    if observed is None:
        raise Stop(Outcome.REFUSED, f"no session {session_id}")
    source = observed.session
    found = store.standing(session_id)
    refusal = guard_refusal(
        GuardFacts(
            registered_main=found.state is not None,
            idle=source.status == IDLE,
            archived=bool(source.archived),
            subagent=source.parent_id is not None,
            has_redirect=found.redirect_to is not None,
            other_runtime=(
                source.runtime != PRODUCT_RUNTIME and not observed.hooked and not manual
            ),
        )
    )
    if refusal is not None or found.state is None:
        # Not idle: no mid-turn migration, the request waits for the next idle.
        why = refusal or NOT_A_MAIN
        raise Stop(Outcome.REFUSED, MESSAGES[why], keeps_request=why == NOT_IDLE)
    guarded = Guarded(controller, observed, found.state, int(source.revision))
    steps.append(StepResult(Step.GUARD, True, f"revision {guarded.revision}"))
    return guarded


def measure(guarded: Guarded, steps: list[StepResult]) -> Measured:
    """Step 2: tokens (with label), turns, compactions, capacity.

    It only reads, so its reads are shared (``common.reads.reads_once``): the usage projection's
    row, which the usage projection and the token meter services both read, is read once."""
    with reads_once():
        values = services.load_settings()
        found, reading = metrics.measure(guarded.observation.session, values)
    steps.append(StepResult(Step.METRICS, True, f"{metrics.metrics_dict(found)} {reading.label}"))
    return Measured(values, found, reading)


def reason(
    guarded: Guarded, measured: Measured, *, manual: bool, steps: list[StepResult]
) -> Reason:
    """Step 3: ``manual`` when requested, else the trigger (automatic needs both switches)."""
    if not manual:
        state = guarded.state
        if not measured.values.auto_handoff or not state.enabled:
            raise Stop(Outcome.NO_TRIGGER, "automatic handoff needs autoHandoff and enable")
        if state.last_attempt_seq == guarded.revision:
            raise Stop(
                Outcome.NO_TRIGGER,
                f"an automatic attempt already ran at revision {guarded.revision}",
            )
        waiting = wait.holds(state, timezone.now())
        if waiting is not None:
            raise Stop(Outcome.NO_TRIGGER, waiting)
    config = measured.values.trigger_config()
    why = decide_reason(
        requested=manual, metrics=measured.metrics, config=config, label=measured.reading.label
    )
    if why is None:
        if measured.reading.label is TokenLabel.UNAVAILABLE:
            raise Stop(Outcome.NO_TRIGGER, degradation.TOKENS_UNAVAILABLE_REFUSAL)
        m = measured.metrics
        raise Stop(
            Outcome.NO_TRIGGER,
            f"no trigger: {m.tokens} tokens (threshold {threshold(m, config):g}), "
            f"{m.turns} turns (minimum {config.handoff_min_turns}), {m.compactions} compactions",
        )
    steps.append(StepResult(Step.REASON, True, why))
    return why


def blockers(guarded: Guarded, *, manual: bool, steps: list[StepResult]) -> None:
    """Step 4: any blocker defers the attempt and is written into ``deferred``.

    The facts are the guard's observation (read in step 1); ``deferred`` is written only when
    it changes.
    """
    found = find_blockers(blocker_facts(guarded.observation), manual=manual)
    if found != list(guarded.state.deferred):
        store.update_main_state(guarded.observation.session.pk, deferred=found)
    if found:
        raise Stop(Outcome.DEFERRED, f"deferred by {', '.join(found)}", found, keeps_request=True)
    steps.append(StepResult(Step.BLOCKERS, True))


class _StuckAttempt(Exception):
    """The source's attempt in progress looks stuck: recover it, then claim again."""

    def __init__(self, record: HandoffRecord) -> None:
        super().__init__(str(record.pk))
        self.record = record


def mark_attempt(
    claim: Claim, measured: Measured, steps: list[StepResult]
) -> tuple[Attempt, HostSession]:
    """Step 5: claim the source under a lock and record ``summarizing`` with the revision.

    Returns the attempt, now holding its record, and the source as the claim's ``stable()``
    check read it. A second attempt on the same source finds the first one's record and is
    refused; one that looks stuck is recovered first (``handoff.recovery``), then the claim
    runs once more. One transaction: a crash leaves no record or the record.
    """
    try:
        record, source = _claim(claim, measured, recover=True)
    except _StuckAttempt as stuck:
        with contextlib.suppress(PhaseError):
            recovery.recover_record(stuck.record)
        record, source = _claim(claim, measured, recover=False)
    steps.append(StepResult(Step.MARK_ATTEMPT, True, str(record.pk)))
    return Attempt(claim, record, steps), source


def _claim(claim: Claim, measured: Measured, *, recover: bool) -> tuple[HandoffRecord, HostSession]:
    """Lock the main, re-check it (no attempt in progress, no redirect, ``stable()``) and create
    the record; return it with the source read; raises ``_StuckAttempt`` (``recover``) or
    ``Stop``."""
    with transaction.atomic():
        state = store.lock_main_state(claim.session_id)
        found = store.standing(claim.session_id)
        if found.in_progress is not None:
            current = HandoffRecord.objects.get(pk=found.in_progress)
            if recover and recovery.is_stuck(current, timezone.now()):
                raise _StuckAttempt(current)
            raise Stop(
                Outcome.REFUSED,
                f"attempt {current.pk} is already in progress",
                keeps_request=True,
            )
        if found.redirect_to is not None:
            raise Stop(Outcome.REFUSED, MESSAGES[ALREADY_REDIRECTED])
        try:
            source = stable_source(claim, state)
        except Unstable as why:
            raise Stop(Outcome.REFUSED, f"not stable: {why}") from why
        record = store.create_record(
            source_id=claim.session_id,
            reason=claim.reason,
            metrics=metrics.metrics_dict(measured.metrics),
            source_revision=claim.revision,
        )
        store.save_main_state(state, last_attempt_seq=claim.revision)
        return record, source


# --- steps 6–8: the attempt holds a record ---------------------------------------------------


def summarize(attempt: Attempt, source: HostSession) -> Summary:
    """Step 6: one model call (outside any transaction) whose JSON must be a valid brief.

    Step 5 checked ``stable()`` under the lock a moment before; the check that matters is the
    one after the call, which a change made while the summary was written fails: step 7's move
    of the record carries it (``prepare``).
    """
    try:
        _point(attempt, "summarize")
        brief = summarizer.summarize_session(source, attempt.host)
    except Exception as exc:
        raise _failed(Step.SUMMARIZE, exc) from exc
    attempt.note(Step.SUMMARIZE, brief["goal"][:120])
    return Summary(brief, source)


def wants_review(guarded: Guarded, measured: Measured) -> bool:
    """Return whether this attempt's brief waits for review before the successor starts.

    A session another runtime runs (Claude Code, Codex) always waits: the user chooses in
    that terminal (``/clear``, or a new terminal), as a review is committed (docs/spec.md,
    Recovery: an unclaimed brief expires as a review does). Otherwise the main's own choice
    (``MainState.review``, as step 1 read it) wins; unset, the settings' ``review_handoffs``
    (as step 2 read them) decides.
    """
    if guarded.observation.session.runtime != PRODUCT_RUNTIME:
        return True
    own = guarded.state.review
    return bool(measured.values.review_handoffs if own is None else own)


def prepare(attempt: Attempt, summary: Summary, *, review: bool) -> HostSession:
    """Step 7: the brief is stored (``prepared``) with the successor draft it opens; return the
    draft.

    The record's move carries the re-check after the summary (``_moved_while_stable``): a
    change made while the summary was written fails it (``changed``) and nothing of the
    transaction stays. One transaction: the
    record's brief, phase, target, inheritance report and, when the brief waits for ``review``,
    ``review_until`` (``settings.HANDOFF_REVIEW_TIMEOUT`` seconds from now, default 86 400: 24 h),
    the draft and its inherited settings land together, so a crash leaves a ``summarizing``
    record (recovery fails it) and no draft. A failing inheritance row is reported on the record
    and rolled back alone (a savepoint).
    """
    source = summary.source
    timeout = timedelta(seconds=conf.handoff_settings().review_timeout)
    try:
        with transaction.atomic():
            draft, rows = inheritance.create_successor(attempt.host, source)
            rows += inheritance.apply(attempt.host, source, draft)
            record = _moved_while_stable(
                attempt,
                Step.PREPARE,
                Phase.PREPARED,
                brief=summary.brief,
                target_id=draft.pk,
                inheritance=rows,
                review_until=timezone.now() + timeout if review else None,
            )
    except (PhaseError, Fail):
        raise
    except Exception as exc:
        raise _failed(Step.PREPARE, exc, "the successor could not be created: ") from exc
    attempt.record, attempt.draft = record, draft
    attempt.note(Step.PREPARE, str(draft.pk))
    return draft


def commit(attempt: Attempt, brief: dict[str, Any], draft: HostSession) -> None:
    """Step 8: seed → flush → redirect → record committed → start.

    Redirect, ``committed``, the main-state hand-over, the source's title and its notice are
    one transaction taken under the main state's lock, after a last stability check: a crash
    or failure inside leaves no route. A failing start leaves ``committed-start-pending``.
    The route's after-commit work waits for the start's outcome (``common.after_commit``):
    pages hear of the route and the start in one batch, so a tab on the source opens the
    successor at once, and it is rendered once. A
    record waiting for review (``review_until`` set) stops before the seed: ``commit_review``
    runs this step later.
    """
    if attempt.record.review_until is not None:
        attempt.note(Step.COMMIT, f"waiting for review until {attempt.record.review_until}")
        return
    _point(attempt, "before_seed")
    source = _check(attempt, CommitStep.SEED)
    text = render_brief(brief, source_title=source.title)
    try:
        seq = attempt.host.seed(draft, text)
    except Exception as exc:
        raise _failed(CommitStep.SEED, exc) from exc
    attempt.note(CommitStep.SEED, f"#{seq}")
    try:
        _point(attempt, "flush")
        attempt.host.flush(draft, seq)
    except Exception as exc:
        raise _failed(CommitStep.FLUSH, exc, "the seed was not stored: ") from exc
    attempt.note(CommitStep.FLUSH)
    _point(attempt, "before_commit")
    with after_commit.held():  # pages hear of the route with the start's outcome
        try:
            with transaction.atomic():
                _route(attempt, source, draft)
        except Fail:
            raise
        except Exception as exc:
            raise _failed(CommitStep.REDIRECT, exc) from exc
        attempt.routed = True
        attempt.note(CommitStep.REDIRECT)
        attempt.note(CommitStep.RECORD, Phase.COMMITTED)
        _start(attempt, draft)


def _route(attempt: Attempt, source: HostSession, draft: HostSession) -> None:
    """Inside one transaction: title, redirect, last check with ``committed``, main states,
    notice.

    The source is renamed first: writing its row waits for any input being posted to it and
    holds it off until this commits, so the last stability check (carried by the record's move
    to ``committed``, ``_moved_while_stable``) sees that input, and input posted after it meets
    the redirect (invariant 7); a failing check rolls the redirect back with the rest.
    """
    source_id = attempt.session_id
    successor_id = str(draft.pk)
    state = store.lock_main_state(source_id)
    known_as = source.title
    attempt.host.rename(source, handed_off_title(known_as, successor_id))
    _point(attempt, "redirect")
    store.add_redirect(source_id, successor_id, attempt.record, source_title=known_as)
    attempt.record = _moved_while_stable(attempt, CommitStep.REDIRECT, Phase.COMMITTED, state)
    store.hand_over(state, successor_id)
    # People read the successor's title (the page's banner links it); its id only without one.
    named = f"“{draft.title}”" if draft.title else successor_id
    attempt.host.append_notice(source, RELAY_NOTICE % {"named": named})


def _start(attempt: Attempt, draft: HostSession) -> None:
    """Wake the successor: ``started``, or ``committed-start-pending`` when starting fails.

    The start and the record's ``started`` are one transaction; a crash half-way leaves the
    record ``committed`` and the successor unwoken, which recovery moves to
    ``committed-start-pending``. Input relayed right after the route may have woken the
    successor first (it answers on its brief): a start refused then still ends ``started``, as
    recovery decides.
    """
    try:
        _point(attempt, "start")
        with transaction.atomic():
            if not attempt.host.start(draft):
                attempt.note(CommitStep.START, "its runtime starts it: waiting for its first turn")
                return
            attempt.record = store.move(attempt.record, Phase.STARTED)
    except PhaseError:
        raise
    except Exception as exc:
        if attempt.host.is_unwoken_draft(draft):
            logger.exception("starting successor %s failed", draft.pk)
            attempt.record = store.move(
                attempt.record,
                Phase.COMMITTED_START_PENDING,
                error=f"start: {type(exc).__name__}: {exc}",
            )
            attempt.note(CommitStep.START, str(exc), ok=False)
            return
        logger.info("successor %s was woken meanwhile (%s)", draft.pk, exc)
        attempt.record = store.move(attempt.record, Phase.STARTED)
    attempt.note(CommitStep.START)


# --- running an attempt ------------------------------------------------------------------


def _fail(attempt: Attempt, failure: Fail) -> AttemptOutcome:
    """Discard this attempt's draft if allowed and move the record to ``failed``."""
    attempt.note(failure.step, failure.detail, ok=False)
    draft = attempt.draft
    archived, discarded = (
        recovery.discard_draft(attempt.session_id, draft.pk) if draft is not None else (False, "")
    )
    keep = draft.pk if draft is not None and not archived else None
    try:
        attempt.record = store.move(
            attempt.record,
            Phase.FAILED,
            error="; ".join(filter(None, [str(failure), discarded])),
            target_id=keep,
        )
    except PhaseError:
        logger.warning("record %s was moved meanwhile; not failed again", attempt.record.pk)
        attempt.record.refresh_from_db()
    if not attempt.claim.manual and not failure.changed:
        wait.record_failure(attempt.session_id, timezone.now())
    return AttemptOutcome(
        Outcome.FAILED, attempt.session_id, str(failure), attempt.record, [], attempt.steps
    )


def _noted(steps: list[StepResult], name: str, step: Callable[[], T]) -> T:
    """Run one of steps 1–5; a ``Stop`` is recorded as the step's outcome and passed on."""
    try:
        return step()
    except Stop as stop:
        steps.append(StepResult(name, False, stop.detail))
        raise


def _claimed(session_id: str, manual: bool) -> tuple[Attempt, Measured, Guarded, HostSession]:
    """Steps 1–5: return the attempt holding its record, with what steps 1 and 2 read and the
    source as step 5 read it; raise ``Stop`` when the attempt ends without a record."""
    steps: list[StepResult] = []
    try:
        guarded = _noted(steps, Step.GUARD, lambda: guard(session_id, steps, manual=manual))
        measured = _noted(steps, Step.METRICS, lambda: measure(guarded, steps))
        why = _noted(
            steps, Step.REASON, lambda: reason(guarded, measured, manual=manual, steps=steps)
        )
        _noted(steps, Step.BLOCKERS, lambda: blockers(guarded, manual=manual, steps=steps))
        claim = Claim(session_id, manual, guarded.controller, why, guarded.revision)
        attempt, source = _noted(
            steps, Step.MARK_ATTEMPT, lambda: mark_attempt(claim, measured, steps)
        )
    except Stop as stop:
        stop.steps = steps
        raise
    return attempt, measured, guarded, source


def run(session_id: Any, *, manual: bool) -> AttemptOutcome:
    """Run one attempt on ``session_id`` synchronously and return how it ended.

    ``manual`` attempts need the main's ``requested`` (``handoff.operations.request_now``);
    automatic ones need ``autoHandoff`` and ``enabled``. ``requested`` is cleared when the
    attempt ends, whatever the outcome, except a deferral (the attempt waits for its blockers
    and is retried on the next idle or blocker-cleared signal) and a refusal because another
    attempt is in progress (the request is that attempt's) or because the session is not idle
    (the request waits for the next idle). Once a record exists, every
    failure ends in the record (``failed``), logged; before, only expected stops are returned.
    An attempt whose brief waits for review ends ``WAITING_FOR_REVIEW`` (its record
    ``prepared``).
    """
    key = str(session_id)
    try:
        attempt, measured, guarded, source = _claimed(key, manual)
    except Stop as stop:
        if manual and not stop.keeps_request:
            store.clear_requested(key)
        return AttemptOutcome(stop.outcome, key, stop.detail, None, stop.blockers, stop.steps)
    except Exception:
        if manual:
            store.clear_requested(key)
        raise
    return _conclude(attempt, lambda: _hand_off(attempt, source, guarded, measured))


def _hand_off(attempt: Attempt, source: HostSession, guarded: Guarded, measured: Measured) -> None:
    """Steps 6–8, each failure not of its own making becoming a ``Fail`` of that step."""
    summary = _failing(Step.SUMMARIZE, lambda: summarize(attempt, source))
    review = wants_review(guarded, measured)
    draft = _failing(Step.PREPARE, lambda: prepare(attempt, summary, review=review))
    _failing(Step.COMMIT, lambda: commit(attempt, summary.brief, draft))


def _failing(name: str, step: Callable[[], T]) -> T:
    """Run one of steps 6–8; an unexpected exception fails the attempt at that step (logged)."""
    try:
        return step()
    except (Fail, PhaseError):
        raise
    except Exception as exc:
        raise _failed(name, exc) from exc


def claim_of(record: HandoffRecord, controller: SessionController) -> Claim:
    """Return the claim the ``stable()`` re-checks of ``record``'s later steps compare with:
    its source, reason and the revision its brief was written at."""
    return Claim(
        str(record.source_id),
        record.reason == Reason.MANUAL,
        controller,
        Reason(record.reason),
        record.source_revision,
    )


def commit_review(record: HandoffRecord, brief: dict[str, Any]) -> AttemptOutcome:
    """Run step 8 for ``record``, a reviewed ``prepared`` record, seeding ``brief``.

    The caller (``handoff.review.commit``) stored ``brief`` on the record, cleared its
    ``review_until`` and, for a manual record, set the main's ``requested`` (the user's commit
    is the request ``stable()`` checks). The re-checks compare the source with the revision the
    brief was written at: input that arrived while the brief waited fails the attempt, the
    draft discarded (docs/spec.md, Failure outcomes). Raises ``ServiceUnavailable`` without a
    session controller (nothing changed).
    """
    controller = degradation.require(
        services.session_controller(),
        degradation.SESSION_CONTROLLER,
        gettext_noop("a review cannot be committed"),
    )
    claim = claim_of(record, controller)
    draft = controller.get(str(record.target_id)) if record.target_id else None
    attempt = Attempt(claim, record, [], draft)
    return _conclude(attempt, lambda: _commit_reviewed(attempt, brief))


def _commit_reviewed(attempt: Attempt, brief: dict[str, Any]) -> None:
    """Step 8 after a review. A draft written to while the review waited (someone opened it)
    fails the attempt before the seed and is kept as it is (``recovery.discard_draft`` keeps a
    woken draft): no brief goes after someone's message. A successor another runtime runs is
    written by that runtime, which took the brief from its hook's answer or the marker (the
    flush checks that evidence)."""
    draft = attempt.draft
    if draft is None:
        raise Fail(CommitStep.SEED, "the draft no longer exists")
    if draft.runtime == PRODUCT_RUNTIME and not attempt.host.is_unwoken_draft(draft):
        raise Fail(CommitStep.SEED, "the successor was written to before its brief")
    commit(attempt, brief, draft)


def _conclude(attempt: Attempt, body: Callable[[], None]) -> AttemptOutcome:
    """Run ``body``, steps of ``attempt``, and return how it ended; a manual attempt's
    ``requested`` is cleared unless the route cleared it (in its own transaction)."""
    try:
        body()
    except Fail as failure:
        return _fail(attempt, failure)
    except PhaseError as exc:
        return _fail(attempt, Fail("record", str(exc)))
    finally:
        if attempt.claim.manual and not attempt.routed:
            store.clear_requested(attempt.session_id)
    return AttemptOutcome(
        Outcome(attempt.record.phase),
        attempt.session_id,
        attempt.record.error,
        attempt.record,
        [],
        attempt.steps,
    )
