"""The eight-step transaction (seed 000, The transaction; Failure outcomes).

``run(session_id, manual=...)`` runs guard → metrics → reason → blockers → mark_attempt →
summarize → prepare → commit, one function each, each recording its outcome on the attempt.
Steps 1–4 read the stability conditions fresh (the session and its blocker facts once, in
step 1) and end the attempt without a record; from step 5 on every step re-checks ``stable()``
(``handoff.core.stability``), re-reading the session with its blockers (one
``SessionController.observe``), the settings store and the main state from storage, so a toggle,
a new message or a new blocker during summarizing ends the attempt ``failed`` cleanly. The
summary is checked after the call as well; the commit's last check runs under the main state's
lock. The writes are grouped into few transactions: mark, prepare (brief, draft, inheritance),
seed, route, start.

Failure outcomes (seed 000):

| failure point                        | phase                   | consequence                |
|--------------------------------------|-------------------------|----------------------------|
| guard, blockers, no trigger          | (no record)             | blockers into ``deferred`` |
| summarize throws / brief invalid     | failed                  | source untouched           |
| source changed before seed           | failed                  | draft archived             |
| seed flush fails                     | failed                  | draft discarded, no route  |
| source changed before commit         | failed                  | draft discarded            |
| redirect throws                      | failed                  | draft discarded            |
| start throws                         | committed-start-pending | successor id kept          |

Review (DESIGN.md, Decisions, third round) sits between prepare and commit: when the main or
the settings ask for it, step 7 also records ``review_until`` (how long the review may wait) and
the attempt ends there, ``prepared``, until ``commit_review`` runs step 8 with the edited brief
(the same re-checks: input that arrived meanwhile fails it) or ``handoff.review`` discards it.

A draft is discarded (archived, nothing else) only while it is an unwoken draft this attempt
created. The summary runs outside any database transaction. Two attempts on one source end in
at most one successor: step 5 claims the source under a row lock on its main state.

``fault_hook`` is the fault-injection seam: it is sent at each named point with the attempt,
and an exception a receiver raises counts as that point failing (points: ``summarize``,
``before_seed``, ``flush``, ``before_commit``, ``redirect``, ``start``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from handoff import (
    backoff,
    degradation,
    inheritance,
    metrics,
    recovery,
    services,
    store,
    summarizer,
)
from handoff.core.blockers import BlockerFacts, find_blockers
from handoff.core.brief import render_brief
from handoff.core.guard import MESSAGES, NOT_IDLE, GuardFacts, guard_refusal
from handoff.core.naming import handed_off_title
from handoff.core.phases import Phase, Reason
from handoff.core.stability import StabilityFacts, instability
from handoff.core.steps import CommitStep, Step, decide_reason
from handoff.core.tokens import TokenLabel, TokenReading
from handoff.core.trigger import Metrics, threshold
from handoff.exceptions import PhaseError
from handoff.models import HandoffRecord, MainState
from handoff.services import HostSession, SessionController, SessionObservation
from handoff.settings_store import SettingsValues
from handoff.status import record_dict

logger = logging.getLogger(__name__)

fault_hook = Signal()  # sent as fault_hook.send(sender=Attempt, point=str, attempt=Attempt)

# Host session status values the engine reads (host-agnostic strings).
IDLE = "idle"
DISPOSED = "disposed"


class Outcome(StrEnum):
    """How an attempt ended."""

    STARTED = "started"
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


@dataclass
class Attempt:
    """What one attempt has learnt so far (filled in step by step)."""

    session_id: str
    manual: bool
    controller: SessionController | None = None
    observation: SessionObservation | None = None
    state: MainState | None = None
    revision: int = 0
    routed: bool = False
    values: SettingsValues | None = None
    metrics: Metrics | None = None
    reading: TokenReading | None = None
    reason: Reason | None = None
    record: HandoffRecord | None = None
    brief: dict[str, Any] | None = None
    successor: HostSession | None = None
    steps: list[StepResult] = field(default_factory=list)

    @property
    def host(self) -> SessionController:
        """The session controller the guard found (step 1)."""
        assert self.controller is not None, "the guard has not run"
        return self.controller

    @property
    def source(self) -> HostSession:
        """The source as last read (the guard, then each ``stable()`` re-check)."""
        assert self.observation is not None, "the guard has not run"
        return self.observation.session

    @property
    def draft(self) -> HostSession:
        """The successor this attempt created (step 7)."""
        assert self.successor is not None, "no successor was created"
        return self.successor

    def note(self, step: str, detail: str = "", ok: bool = True) -> None:
        """Record a step's outcome."""
        self.steps.append(StepResult(step, ok, detail))


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
        """True when a successor exists (started or start pending)."""
        return self.outcome in (Outcome.STARTED, Outcome.COMMITTED_START_PENDING)

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


class Fail(Exception):
    """Ends an attempt that has a record: the record becomes ``failed``.

    ``changed``: the source changed under the attempt (``stable()`` failed), which is no fault
    of the attempt and starts no backoff (``handoff.backoff``).
    """

    def __init__(self, step: str, detail: str, *, changed: bool = False) -> None:
        super().__init__(f"{step}: {detail}")
        self.step = step
        self.detail = detail
        self.changed = changed


def _point(attempt: Attempt, point: str) -> None:
    fault_hook.send(sender=Attempt, point=point, attempt=attempt)


# --- reading the facts ---------------------------------------------------------------------


def blocker_facts(observed: SessionObservation) -> BlockerFacts:
    """Return the blocker facts of an observed session (seed 000, Deferral)."""
    return BlockerFacts(
        activities=list(observed.activities),
        live_owned_agents=list(observed.live_subagents),
        team_members=observed.team_members,
        pending_inbox=observed.pending_inbox,
        permission_preset=observed.session.permission_preset,
    )


def unstable(attempt: Attempt, state: MainState | None = None) -> str | None:
    """Re-check ``stable()`` from storage: the session with its blockers, settings, main state.

    Reads what the attempt's reason needs: the observation and the main state (none when the
    caller holds it locked and passes it), and the settings only for an automatic attempt (a
    manual one does not depend on ``autoHandoff``). The attempt's source becomes the session
    read here.
    """
    assert attempt.reason is not None
    observed = attempt.host.observe(attempt.session_id)
    if observed is None:
        return "the session no longer exists"
    attempt.observation = observed
    source = observed.session
    if state is None:
        state = store.find_main_state(attempt.session_id)
    automatic = attempt.reason is not Reason.MANUAL
    facts = StabilityFacts(
        disposed=source.status == DISPOSED,
        idle=source.status == IDLE,
        revision=int(source.revision),
        archived=bool(source.archived),
        blockers=find_blockers(blocker_facts(observed), manual=attempt.manual),
        auto_handoff=automatic and services.load_settings().auto_handoff,
        enabled=bool(state and state.enabled),
        requested=bool(state and state.requested),
    )
    return instability(facts, revision=attempt.revision, reason=attempt.reason)


def _check(attempt: Attempt, step: str) -> None:
    reason = unstable(attempt)
    if reason is not None:
        raise Fail(step, f"not stable: {reason}", changed=True)


# --- the eight steps ---------------------------------------------------------------------


def guard(attempt: Attempt) -> None:
    """Step 1: a registered main, idle, not archived, not a subagent, no redirect yet.

    A manual request refused because the session is not idle stays ``requested``: the next
    ``session_idle`` evaluation runs it (seed 000: no mid-turn migration, it waits for idle).
    """
    controller = services.session_controller()
    if controller is None:
        raise Stop(Outcome.REFUSED, degradation.NO_CONTROLLER_REFUSAL)
    attempt.controller = controller
    observed = controller.observe(attempt.session_id)
    if observed is None:
        raise Stop(Outcome.REFUSED, f"no session {attempt.session_id}")
    source = observed.session
    found = store.standing(attempt.session_id)
    attempt.state = found.state
    refusal = guard_refusal(
        GuardFacts(
            registered_main=found.state is not None,
            idle=source.status == IDLE,
            archived=bool(source.archived),
            subagent=source.parent_id is not None,
            has_redirect=found.redirect_to is not None,
        )
    )
    if refusal is not None:
        # Not idle: no mid-turn migration, the request waits for the next idle (seed 000).
        raise Stop(Outcome.REFUSED, MESSAGES[refusal], keeps_request=refusal == NOT_IDLE)
    attempt.observation = observed
    attempt.revision = int(source.revision)
    attempt.note(Step.GUARD, f"revision {attempt.revision}")


def measure(attempt: Attempt) -> None:
    """Step 2: tokens (with label), turns, compactions, capacity."""
    attempt.values = services.load_settings()
    attempt.metrics, attempt.reading = metrics.measure(attempt.source, attempt.values)
    attempt.note(Step.METRICS, f"{metrics.metrics_dict(attempt.metrics)} {attempt.reading.label}")


def reason(attempt: Attempt) -> None:
    """Step 3: ``manual`` when requested, else the trigger (automatic needs both switches)."""
    assert attempt.values is not None and attempt.metrics is not None
    assert attempt.reading is not None
    if not attempt.manual:
        state = attempt.state
        if not attempt.values.auto_handoff or state is None or not state.enabled:
            raise Stop(Outcome.NO_TRIGGER, "automatic handoff needs autoHandoff and enable")
        if state.last_attempt_seq == attempt.revision:
            raise Stop(
                Outcome.NO_TRIGGER,
                f"an automatic attempt already ran at revision {attempt.revision}",
            )
        waiting = backoff.holds(state, timezone.now())
        if waiting is not None:
            raise Stop(Outcome.NO_TRIGGER, waiting)
    config = attempt.values.trigger_config()
    attempt.reason = decide_reason(
        requested=attempt.manual,
        metrics=attempt.metrics,
        config=config,
        label=attempt.reading.label,
    )
    if attempt.reason is None:
        if attempt.reading.label is TokenLabel.UNAVAILABLE:
            raise Stop(Outcome.NO_TRIGGER, degradation.TOKENS_UNAVAILABLE_REFUSAL)
        m = attempt.metrics
        raise Stop(
            Outcome.NO_TRIGGER,
            f"no trigger: {m.tokens} tokens (threshold {threshold(m, config):g}), "
            f"{m.turns} turns (minimum {config.handoff_min_turns}), {m.compactions} compactions",
        )
    attempt.note(Step.REASON, attempt.reason)


def blockers(attempt: Attempt) -> None:
    """Step 4: any blocker defers the attempt and is written into ``deferred``.

    The facts are the guard's observation (read in step 1); ``deferred`` is written only when
    it changes.
    """
    assert attempt.observation is not None
    found = find_blockers(blocker_facts(attempt.observation), manual=attempt.manual)
    known = list(attempt.state.deferred) if attempt.state is not None else []
    if found != known:
        attempt.state = store.update_main_state(attempt.session_id, deferred=found)
    if found:
        raise Stop(Outcome.DEFERRED, f"deferred by {', '.join(found)}", found, keeps_request=True)
    attempt.note(Step.BLOCKERS)


class _StuckAttempt(Exception):
    """The source's attempt in progress looks stuck: recover it, then claim again."""

    def __init__(self, record: HandoffRecord) -> None:
        super().__init__(str(record.pk))
        self.record = record


def mark_attempt(attempt: Attempt) -> None:
    """Step 5: claim the source under a lock and record ``summarizing`` with the revision.

    A second attempt on the same source finds the first one's record and is refused; one that
    looks stuck is recovered first (``handoff.recovery``), then the claim runs once more. One
    transaction: a crash leaves no record or the record.
    """
    try:
        _claim(attempt, recover=True)
    except _StuckAttempt as stuck:
        with contextlib.suppress(PhaseError):
            recovery.recover_record(stuck.record)
        _claim(attempt, recover=False)
    assert attempt.record is not None
    attempt.note(Step.MARK_ATTEMPT, str(attempt.record.pk))


def _claim(attempt: Attempt, *, recover: bool) -> None:
    """Lock the main, re-check it (no attempt in progress, no redirect, ``stable()``) and create
    the record; raises ``_StuckAttempt`` (``recover``) or ``Stop``."""
    assert attempt.reason is not None and attempt.metrics is not None
    with transaction.atomic():
        found = store.standing(attempt.session_id, lock=True)
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
            raise Stop(Outcome.REFUSED, MESSAGES["already-redirected"])
        assert found.state is not None
        why = unstable(attempt, found.state)
        if why is not None:
            raise Stop(Outcome.REFUSED, f"not stable: {why}")
        attempt.record = store.create_record(
            source_id=attempt.session_id,
            reason=attempt.reason,
            metrics=metrics.metrics_dict(attempt.metrics),
            source_revision=attempt.revision,
        )
        found.state.last_attempt_seq = attempt.revision
        found.state.save(update_fields=["last_attempt_seq", "updated"])


def summarize(attempt: Attempt) -> None:
    """Step 6: one model call (outside any transaction) whose JSON must be a valid brief.

    Step 5 checked ``stable()`` under the lock a moment before; the check that matters here is
    the one after the call, which a change made while the summary was written fails.
    """
    try:
        context = attempt.host.effective_context(attempt.source)
        _point(attempt, "summarize")
        attempt.brief = summarizer.summarize(attempt.source, context)
    except Exception as exc:
        raise Fail(Step.SUMMARIZE, f"{type(exc).__name__}: {exc}") from exc
    _check(attempt, Step.SUMMARIZE)
    attempt.note(Step.SUMMARIZE, attempt.brief["goal"][:120])


def review_until(attempt: Attempt, now: datetime) -> datetime | None:
    """Return until when this attempt's brief waits for review, or ``None`` (no review).

    The main's own choice wins; unset, the settings' ``review_handoffs`` decides. A review may
    wait ``settings.HANDOFF_REVIEW_TIMEOUT`` seconds (default 86 400: 24 h).
    """
    assert attempt.values is not None
    own = attempt.state.review if attempt.state is not None else None
    wanted = attempt.values.review_handoffs if own is None else own
    if not wanted:
        return None
    return now + timedelta(seconds=settings.HANDOFF_REVIEW_TIMEOUT)


def prepare(attempt: Attempt) -> None:
    """Step 7: the brief is stored (``prepared``) with the successor draft it opens.

    Follows the summary's own re-check (nothing happens between them). One transaction: the
    record's brief, phase, target, inheritance report and ``review_until`` (when the brief
    waits for review), the draft and its inherited settings land together, so a crash leaves a
    ``summarizing`` record (recovery fails it) and no draft. A failing inheritance row is
    reported on the record and rolled back alone (a savepoint).
    """
    assert attempt.record is not None
    try:
        with transaction.atomic():
            successor, rows = inheritance.create_successor(attempt.host, attempt.source)
            attempt.successor = successor
            rows += inheritance.apply(attempt.host, attempt.source, successor)
            attempt.record = store.move(
                attempt.record,
                Phase.PREPARED,
                brief=attempt.brief,
                target_id=successor.pk,
                inheritance=rows,
                review_until=review_until(attempt, timezone.now()),
            )
    except PhaseError:
        attempt.successor = None
        raise
    except Exception as exc:
        attempt.successor = None
        raise Fail(Step.PREPARE, f"the successor could not be created: {exc}") from exc
    attempt.note(Step.PREPARE, str(successor.pk))


def commit(attempt: Attempt) -> None:
    """Step 8: seed → flush → redirect → record committed → start.

    Redirect, ``committed``, the main-state hand-over, the source's title and its notice are
    one transaction taken under the main state's lock, after a last stability check: a crash
    or failure inside leaves no route. A failing start leaves ``committed-start-pending``. A
    record waiting for review (``review_until`` set) stops before the seed: ``commit_review``
    runs this step later.
    """
    assert attempt.record is not None and attempt.brief is not None
    if attempt.record.review_until is not None:
        attempt.note(Step.COMMIT, f"waiting for review until {attempt.record.review_until}")
        return
    _point(attempt, "before_seed")
    _check(attempt, CommitStep.SEED)
    text = render_brief(attempt.brief, source_title=attempt.source.title)
    try:
        seq = attempt.host.seed(attempt.draft, text)
    except Exception as exc:
        raise Fail(CommitStep.SEED, f"{type(exc).__name__}: {exc}") from exc
    attempt.note(CommitStep.SEED, f"#{seq}")
    try:
        _point(attempt, "flush")
        attempt.host.flush(attempt.draft, seq)
    except Exception as exc:
        raise Fail(CommitStep.FLUSH, f"the seed was not stored: {exc}") from exc
    attempt.note(CommitStep.FLUSH)
    _point(attempt, "before_commit")
    try:
        with transaction.atomic():
            _route(attempt)
    except Fail:
        raise
    except Exception as exc:
        raise Fail(CommitStep.REDIRECT, f"{type(exc).__name__}: {exc}") from exc
    attempt.routed = True
    attempt.note(CommitStep.REDIRECT)
    attempt.note(CommitStep.RECORD, Phase.COMMITTED)
    _start(attempt)


def _route(attempt: Attempt) -> None:
    """Inside one transaction: title, last check, redirect, ``committed``, main states, notice.

    The source is renamed first: writing its row waits for any input being posted to it and
    holds it off until this commits, so the last stability check sees that input, and input
    posted after it meets the redirect (invariant 7).
    """
    assert attempt.record is not None
    source_id = attempt.session_id
    successor_id = str(attempt.draft.pk)
    state = store.lock_main_state(source_id)
    attempt.host.rename(attempt.source, handed_off_title(attempt.source.title, successor_id))
    why = unstable(attempt, state)
    if why is not None:
        raise Fail(CommitStep.REDIRECT, f"not stable: {why}", changed=True)
    _point(attempt, "redirect")
    store.add_redirect(source_id, successor_id, attempt.record)
    attempt.record = store.move(attempt.record, Phase.COMMITTED)
    continue_enabled = state.enabled
    state.enabled = state.requested = False
    state.deferred = []
    backoff.reset(state)
    state.save()
    MainState.objects.create(
        session_id=successor_id, enabled=continue_enabled, inherited_from_id=source_id
    )
    # People read the successor's title (the page's banner links it); its id only without one.
    named = f"“{attempt.draft.title}”" if attempt.draft.title else successor_id
    attempt.host.append_notice(
        attempt.source,
        f"Handed off to {named}. This conversation is now a relay: new input is forwarded there.",
    )


def _start(attempt: Attempt) -> None:
    """Wake the successor: ``started``, or ``committed-start-pending`` when starting fails.

    The start and the record's ``started`` are one transaction; a crash half-way leaves the
    record ``committed`` and the successor unwoken, which recovery moves to
    ``committed-start-pending``. Input relayed right after the route may have woken the
    successor first (it answers on its brief): a start refused then still ends ``started``, as
    recovery decides.
    """
    assert attempt.record is not None
    try:
        _point(attempt, "start")
        with transaction.atomic():
            attempt.host.start(attempt.draft)
            attempt.record = store.move(attempt.record, Phase.STARTED)
    except PhaseError:
        raise
    except Exception as exc:
        if attempt.host.is_unwoken_draft(attempt.draft):
            logger.exception("starting successor %s failed", attempt.draft.pk)
            attempt.record = store.move(
                attempt.record,
                Phase.COMMITTED_START_PENDING,
                error=f"start: {type(exc).__name__}: {exc}",
            )
            attempt.note(CommitStep.START, str(exc), ok=False)
            return
        logger.info("successor %s was woken meanwhile (%s)", attempt.draft.pk, exc)
        attempt.record = store.move(attempt.record, Phase.STARTED)
    attempt.note(CommitStep.START)


# --- running an attempt ------------------------------------------------------------------

STEPS = (
    (Step.GUARD, guard),
    (Step.METRICS, measure),
    (Step.REASON, reason),
    (Step.BLOCKERS, blockers),
    (Step.MARK_ATTEMPT, mark_attempt),
    (Step.SUMMARIZE, summarize),
    (Step.PREPARE, prepare),
    (Step.COMMIT, commit),
)


def discard_draft(attempt: Attempt) -> tuple[bool, str]:
    """Archive this attempt's draft if it is still unwoken; return (archived, what happened).

    Only a draft this attempt created is touched, and only archived (seed 000: ``discard``). A
    successor the route already leads to is committed and never archived, even unstarted.
    """
    successor = attempt.successor
    if successor is None:
        return False, ""
    redirect = store.redirect_of(attempt.session_id)
    if redirect is not None and redirect.destination_id == successor.pk:
        return False, f"successor {successor.pk} kept (the route to it is committed)"
    if not attempt.host.is_unwoken_draft(successor):
        return False, f"draft {successor.pk} kept (it was woken)"
    attempt.host.archive(successor)
    return True, f"draft {successor.pk} archived"


def _fail(attempt: Attempt, failure: Fail) -> AttemptOutcome:
    """Discard this attempt's draft if allowed and move the record to ``failed``."""
    assert attempt.record is not None
    attempt.note(failure.step, failure.detail, ok=False)
    archived, discarded = discard_draft(attempt)
    keep = attempt.successor.pk if attempt.successor is not None and not archived else None
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
    if not attempt.manual and not failure.changed:
        backoff.record_failure(attempt.session_id, timezone.now())
    return AttemptOutcome(
        Outcome.FAILED, attempt.session_id, str(failure), attempt.record, [], attempt.steps
    )


def _steps(attempt: Attempt) -> None:
    for name, step in STEPS:
        try:
            step(attempt)
        except Stop as stop:
            attempt.note(name, stop.detail, ok=False)
            raise
        except (Fail, PhaseError):
            raise
        except Exception as exc:
            if attempt.record is None:
                raise
            logger.exception("handoff step %s failed", name)
            raise Fail(name, f"{type(exc).__name__}: {exc}") from exc


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
    return _conclude(Attempt(str(session_id), manual), _steps)


def commit_review(record: HandoffRecord, brief: dict[str, Any]) -> AttemptOutcome:
    """Run step 8 for ``record``, a reviewed ``prepared`` record, seeding ``brief``.

    The caller (``handoff.review.commit``) stored ``brief`` on the record, cleared its
    ``review_until`` and, for a manual record, set the main's ``requested`` (the user's commit
    is the request ``stable()`` checks). The re-checks compare the source with the revision the
    brief was written at: input that arrived while the brief waited fails the attempt, the
    draft discarded (seed 000, Failure outcomes). Raises ``ServiceUnavailable`` without a
    session controller (nothing changed).
    """
    controller = degradation.require(
        services.session_controller(),
        degradation.SESSION_CONTROLLER,
        "a review cannot be committed",
    )
    attempt = Attempt(
        str(record.source_id),
        record.reason == Reason.MANUAL,
        controller=controller,
        revision=record.source_revision,
        reason=Reason(record.reason),
        record=record,
        brief=brief,
        successor=controller.get(str(record.target_id)) if record.target_id else None,
    )
    return _conclude(attempt, _commit_reviewed)


def _commit_reviewed(attempt: Attempt) -> None:
    if attempt.successor is None:
        raise Fail(CommitStep.SEED, "the draft no longer exists")
    commit(attempt)


def _conclude(attempt: Attempt, body: Callable[[Attempt], None]) -> AttemptOutcome:
    """Run ``body`` on ``attempt`` and return how it ended (``run``'s rules on the request)."""
    keep_request = False
    try:
        body(attempt)
    except Stop as stop:
        keep_request = stop.keeps_request
        return AttemptOutcome(
            stop.outcome,
            attempt.session_id,
            stop.detail,
            attempt.record,
            stop.blockers,
            attempt.steps,
        )
    except Fail as failure:
        return _fail(attempt, failure)
    except PhaseError as exc:
        return _fail(attempt, Fail("record", str(exc)))
    finally:
        # The route clears ``requested`` in its own transaction.
        if attempt.manual and not keep_request and not attempt.routed:
            store.clear_requested(attempt.session_id)
    assert attempt.record is not None
    return AttemptOutcome(
        Outcome(attempt.record.phase),
        attempt.session_id,
        attempt.record.error,
        attempt.record,
        [],
        attempt.steps,
    )
