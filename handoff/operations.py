"""What users and the host ask of the handoff (docs/spec.md, Switches).

- ``enable``: the main becomes eligible for automatic handoff and is evaluated at once;
- ``disable``: clears ``enabled`` and ``requested``; on a source with a redirect it also
  removes the redirect (forwarding stops; docs/spec.md, Recovery);
- ``request_now``: sets ``requested`` and enqueues a manual attempt (never waits for it);
- ``run_attempt``: runs the eight steps synchronously (the task, ``handoff now --wait``);
- ``status``: the one status report;
- ``evaluate``: the automatic evaluation run when a session turns idle or a blocker clears
  (``evaluate_enabled_mains``: every enabled main, when the global settings change);
- ``review_on`` / ``review_off``: this main's handoffs wait for review before the successor
  starts, or do not (whatever the settings' ``review_handoffs`` say);
- ``review`` / ``commit`` / ``discard``: show, commit or discard the handoff waiting for review
  (``handoff.review``);
- ``act``: one of the ``Action`` table (``enable``, ``disable``, ``now``, ``status``,
  ``review``, ``commit``, ``discard``, ``review-on``, ``review-off``), as the API, the composer,
  the panel and ``manage.py handoff`` name them;
- ``owned_session`` / ``owned_session_ids``: the one ownership check of the handoff's surfaces
  (one session; the ids its lists filter by).

Every operation checks its session first and raises a ``HandoffError`` with nothing changed:
``ServiceUnavailable`` (no session controller), ``SessionNotFound``, ``NotAMain`` (a subagent),
``AlreadyHandedOff`` (enable / now on a relay).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any

from django.db import DatabaseError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from handoff import attempt as attempts
from handoff import degradation, metrics, review, services, store, tasks
from handoff import status as status_module
from handoff.attempt import AttemptOutcome
from handoff.backoff import wait
from handoff.digest import per_session
from handoff.exceptions import (
    AlreadyHandedOff,
    CommitsInItsTerminal,
    NoReviewWaiting,
    NotAMain,
    ReviewWaiting,
    SessionNotFound,
)
from handoff.models import MainState
from handoff.services import PRODUCT_RUNTIME, HostSession, SessionController
from handoff.shapes import StatusOut
from handoff.words.review import review_notice

logger = logging.getLogger(__name__)


def _controller() -> SessionController:
    return degradation.require(
        services.session_controller(),
        degradation.SESSION_CONTROLLER,
        gettext_noop("handoff is unavailable and automatic handoff is off"),
    )


def _main(session_id: Any) -> HostSession:
    """Return the session if it exists and is a main; raise a ``HandoffError`` otherwise."""
    session = _controller().get(str(session_id))
    if session is None:
        raise SessionNotFound(session_id)
    if session.parent_id is not None:
        raise NotAMain(session_id)
    return session


def _not_handed_off(session_id: Any) -> None:
    redirect = store.redirect_of(str(session_id))
    if redirect is not None:
        raise AlreadyHandedOff(session_id, redirect.destination_id)


def _no_review_waiting(session_id: Any) -> None:
    """Refuse a new request while a handoff waits for review: it would linger as ``requested``
    and start another attempt once the review is discarded."""
    if review.waiting(session_id) is not None:
        raise ReviewWaiting(session_id)


def owned_session(session_id: Any, user_id: Any) -> HostSession:
    """Return the session ``session_id`` if it exists and belongs to user ``user_id``.

    Raises ``SessionNotFound`` for a missing, malformed or another user's session (the same
    answer, so ids never leak) and ``ServiceUnavailable`` without a session controller.
    """
    session = _controller().get(str(session_id))
    if session is None or session.owner_id != user_id:
        raise SessionNotFound(session_id)
    return session


def owned_session_ids(user_id: Any) -> Iterable[Any]:
    """Return the pks of the sessions user ``user_id`` owns, for an ``__in`` filter of the
    handoff's lists (the host's ``SessionController.owned_by``: the handoff never filters on
    the session model's own columns). Raises ``ServiceUnavailable`` without a session
    controller."""
    return _controller().owned_by(user_id)


def status(session_id: Any) -> StatusOut:
    """Return the session's status report. Raises ``SessionNotFound`` for an unknown session
    (without a session controller the report says handoff is unavailable)."""
    controller = services.session_controller()
    if controller is not None and controller.get(str(session_id)) is None:
        raise SessionNotFound(session_id)
    try:
        store.key(session_id)
    except ValueError as exc:
        raise SessionNotFound(session_id) from exc
    return status_module.build(session_id)


def enable(session_id: Any) -> StatusOut:
    """Make the main eligible for automatic handoff and evaluate it at once.

    Re-arms it: an automatic attempt that failed at the current revision may run again, and
    the backoff after failures is reset (``handoff.backoff.wait``). Writes one row (the main state);
    a crash after it leaves the main enabled and evaluated at the next idle.
    """
    _main(session_id)
    _not_handed_off(session_id)
    store.update_main_state(
        str(session_id), enabled=True, last_attempt_seq=None, failures=0, retry_at=None
    )
    evaluate(session_id)
    return status_module.build(session_id)


def disable(session_id: Any) -> StatusOut:
    """Clear ``enabled`` and ``requested``; remove the session's redirect (forwarding stops).

    One transaction: a crash half-way leaves both switches and the redirect as they were.
    """
    _main(session_id)
    with transaction.atomic():
        store.update_main_state(str(session_id), enabled=False, requested=False, deferred=[])
        store.remove_redirect(str(session_id))
    return status_module.build(session_id)


def request_now(session_id: Any) -> StatusOut:
    """Set ``requested`` and enqueue a manual attempt; return the status without waiting.

    Refused (``ReviewWaiting``, nothing changed) while a handoff waits for review.

    The flag is stored first, then the task is enqueued (outside any transaction opened here,
    so the summary never runs inside one, even on the immediate backend). A crash between the
    two leaves ``requested`` set: the next idle or blocker-cleared evaluation runs it.
    """
    _main(session_id)
    _not_handed_off(session_id)
    _no_review_waiting(session_id)
    store.update_main_state(str(session_id), requested=True)
    tasks.enqueue_attempt(session_id, manual=True)
    return status_module.build(session_id)


def run_attempt(session_id: Any, *, manual: bool) -> AttemptOutcome:
    """Run one attempt synchronously and return how it ended (``handoff now --wait``).

    ``manual=True`` requests it first (sets ``requested``, as ``request_now`` does);
    ``manual=False`` is one automatic evaluation through the eight steps. Raises a
    ``HandoffError`` for a session that cannot take part; failures of the attempt itself are
    in the outcome.
    """
    _main(session_id)
    if manual:
        _not_handed_off(session_id)
        _no_review_waiting(session_id)
        store.update_main_state(str(session_id), requested=True)
    return attempts.run(session_id, manual=manual)


def evaluate(session_id: Any) -> bool:
    """Enqueue an attempt if one may run now; return whether one was enqueued.

    A pending request (``requested``, e.g. a deferred ``now``) runs as a manual attempt;
    otherwise an automatic one needs ``autoHandoff``, the main's ``enabled``, an idle session,
    a revision not attempted yet and no backoff holding it (``handoff.backoff.wait``); when none may
    run, stale ``deferred`` blockers are cleared. Never raises for a session that cannot take
    part.
    """
    controller = services.session_controller()
    session = controller.get(str(session_id)) if controller is not None else None
    if session is None or session.parent_id is not None:
        return False
    state = store.find_main_state(str(session_id))
    if state is None:
        return False
    if state.requested:
        tasks.enqueue_attempt(session_id, manual=True)
        return True
    eligible = (
        state.enabled
        and services.load_settings().auto_handoff
        and session.status == attempts.IDLE
        and state.last_attempt_seq != session.revision
        and wait.holds(state, timezone.now()) is None
        and store.redirect_of(str(session_id)) is None
    )
    if eligible:
        tasks.enqueue_attempt(session_id, manual=False)
    elif state.deferred:
        # No attempt will run: the blockers of the last one no longer defer anything.
        store.update_main_state(session_id, deferred=[])
    return bool(eligible)


def evaluate_enabled_mains() -> int:
    """Evaluate every main whose own switch is on, at once; return how many attempts were
    enqueued.

    Run after the global settings change (``autoHandoff`` and the thresholds are read live;
    docs/spec.md, Switches): switching ``autoHandoff`` on hands off an idle main that is due without
    waiting for its next turn. Each main goes through ``evaluate`` (busy ones wait for their idle
    event).
    """
    enabled = MainState.objects.filter(enabled=True).values_list("session_id", flat=True)
    return sum(evaluate(session_id) for session_id in list(enabled))


def on_session_idle(sender: Any, session: Any, **kwargs: Any) -> None:
    """``session_idle`` receiver: fold what the session logged into its kept digest (with the
    offline summarizer, which reads it: ``handoff.digest.per_session``), evaluate the session (the
    next idle retries; docs/spec.md, Deferral); when no handoff applies, let the host's own
    compaction run near the window (the fallback)."""
    refresh_digest(session)
    if not evaluate(session.pk):
        compact_if_due(session.pk)


def refresh_digest(session: HostSession) -> None:
    """Fold the entries ``session`` logged since its kept digest in, when the offline
    summarizer reads it; a database error is logged and leaves the digest behind (the summary
    folds in what it misses), never the receiver failing."""
    llm = services.llm()
    host = services.session_controller()
    if llm is None or not llm.offline or host is None:
        return
    try:
        per_session.refresh(session, host)
    except DatabaseError:
        logger.exception("the digest of session %s was not refreshed", session.pk)


def compact_if_due(session_id: Any) -> bool:
    """Run the agent's automatic compaction when it is due; return whether it compacted.

    Compaction stays installed as the fallback (docs/spec.md, Compaction). The service is resolved
    for the session's agent first, then host-wide; without one, automatic compaction is off and the
    status report says so (docs/spec.md, Degradation). Never raises for a session that cannot
    compact.
    """
    controller = services.session_controller()
    session = controller.get(str(session_id)) if controller is not None else None
    if session is None or session.parent_id is not None:
        return False
    service = services.compaction_for(session)
    if service is None:
        return False
    return bool(
        service.compact_if_due(session, metrics.capacity(session, services.load_settings()))
    )


def on_blocker_cleared(sender: Any, session: Any, **kwargs: Any) -> None:
    """``blocker_cleared`` receiver: evaluate the main the cleared blocker belonged to."""
    evaluate(session.parent_id or session.pk)


def choose_review(session_id: Any, wanted: bool) -> StatusOut:
    """Set whether this main's handoffs wait for review before the successor starts.

    Overrides the settings' ``review_handoffs`` for this main; one row written.
    """
    _main(session_id)
    store.update_main_state(str(session_id), review=wanted)
    return status_module.build(session_id)


def review_on(session_id: Any) -> StatusOut:
    """This main's handoffs wait for review (``choose_review``)."""
    return choose_review(session_id, True)


def review_off(session_id: Any) -> StatusOut:
    """This main's handoffs start the successor without review (``choose_review``)."""
    return choose_review(session_id, False)


def show_review(session_id: Any) -> StatusOut:
    """Return the status report of a main whose handoff waits for review (its ``last`` record
    holds the brief); raises ``NoReviewWaiting`` when none waits."""
    _main(session_id)
    if review.waiting(session_id) is None:
        raise NoReviewWaiting(session_id)
    return status_module.build(session_id)


def commit_review(session_id: Any, brief: dict[str, Any] | None = None) -> StatusOut:
    """Commit the main's waiting review with ``brief`` (``None``: as the model wrote it) and
    return the status report. Raises ``InvalidBrief``, ``NoReviewWaiting`` (nothing changed) or
    ``ReviewFailed`` (``handoff.review.commit``), and ``CommitsInItsTerminal`` (nothing
    changed) for a terminal session's brief: its runtime commits it when it starts the
    successor (docs/spec.md, Agent hooks; ``agent_hooks.claim``)."""
    session = _main(session_id)
    if session.runtime != PRODUCT_RUNTIME and review.waiting(session_id) is not None:
        raise CommitsInItsTerminal(session_id, review_notice(session))
    review.commit(session_id, brief)
    return status_module.build(session_id)


def discard_review(session_id: Any) -> StatusOut:
    """Discard the main's waiting review (its draft archived, record ``failed``); return the
    status report. Raises ``NoReviewWaiting`` (nothing changed)."""
    _main(session_id)
    review.discard(session_id)
    return status_module.build(session_id)


class Action(StrEnum):
    """What a user asks of a main's handoff, by the name every surface uses (docs/api.md)."""

    ENABLE = "enable"
    DISABLE = "disable"
    NOW = "now"
    STATUS = "status"
    REVIEW = "review"
    COMMIT = "commit"
    DISCARD = "discard"
    REVIEW_ON = "review-on"
    REVIEW_OFF = "review-off"


ACTIONS: dict[Action, Callable[[Any], StatusOut]] = {
    Action.ENABLE: enable,
    Action.DISABLE: disable,
    Action.NOW: request_now,
    Action.STATUS: status,
    Action.REVIEW: show_review,
    Action.COMMIT: commit_review,
    Action.DISCARD: discard_review,
    Action.REVIEW_ON: review_on,
    Action.REVIEW_OFF: review_off,
}


def act(action: Action | str, session_id: Any) -> StatusOut:
    """Run ``action`` on ``session_id`` and return the status report.

    Raises ``ValueError`` for a name outside ``Action`` and the operation's ``HandoffError``
    (nothing changed then).
    """
    return ACTIONS[Action(action)](session_id)
