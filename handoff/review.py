"""Review before the successor starts (docs/spec.md, Review).

Review sits between ``prepare`` and ``commit``. With review on (the main's own
choice ``MainState.review``, else the settings' ``review_handoffs``), an attempt stops after
step 7: its record stays ``prepared`` (brief and draft durable) with ``review_until`` set in the
same transaction, so recovery tells a waiting review from a crashed attempt and leaves it alone
until then (``handoff.recovery``). From there:

- ``commit(session, brief)``: the edited brief is validated by the seed's rules (schema,
  40 000 characters; bad input changes nothing), stored on the record with the model's
  original kept in ``original_brief``, and step 8 runs with the same ``stable()`` re-checks
  (``handoff.attempt.commit_review``): input that arrived while the brief waited fails the
  attempt, draft discarded, source untouched;
- ``discard(session)``: the draft is discarded (archived while still an unwoken draft) and the
  record ``failed``;
- ``fail_waiting(session, why)``: the waiting handoff fails (its seed never reached a
  terminal successor, or the source changed before the claim);
- ``decline(session)``: the user chose to stay in the source (a terminal session sent its
  prompt again after the choice was offered): the record fails as declined, the draft
  discarded, and an automatic attempt counts a failure (it waits the backoff: docs/spec.md,
  Failure outcomes);
- a review left past ``review_until`` (``settings.HANDOFF_REVIEW_TIMEOUT``, default 24 h) is
  discarded by recovery, the record saying "the review expired".
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from handoff import attempt as attempts
from handoff import recovery, store
from handoff.attempt import AttemptOutcome, Outcome
from handoff.backoff import wait
from handoff.core.brief import BriefError, validate_brief
from handoff.core.phases import DECLINED, DISCARDED_AT_REVIEW, Phase, Reason
from handoff.exceptions import InvalidBrief, NoReviewWaiting, ReviewFailed
from handoff.models import HandoffRecord


def waiting(session_id: Any) -> HandoffRecord | None:
    """Return the session's record waiting for review (``prepared``, ``review_until`` set)."""
    return HandoffRecord.objects.filter(
        source_id=store.key(session_id), phase=Phase.PREPARED, review_until__isnull=False
    ).first()


def _waiting_locked(session_id: Any) -> HandoffRecord:
    """Inside a transaction holding the main state's lock: the waiting record, or raise."""
    record = waiting(session_id)
    if record is None:
        raise NoReviewWaiting(session_id)
    return record


def edited_brief(brief: Any) -> dict[str, Any]:
    """Return ``brief`` validated by the seed's rules; raise ``InvalidBrief`` otherwise."""
    try:
        return validate_brief(brief)
    except BriefError as exc:
        raise InvalidBrief(f"the edited brief is refused: {exc}") from exc


def commit(session_id: Any, brief: dict[str, Any] | None = None) -> AttemptOutcome:
    """Commit the session's waiting review with ``brief`` (``None``: the model's, unedited).

    Raises ``InvalidBrief`` (nothing changed), ``NoReviewWaiting`` (none waits, or it expired:
    then it is discarded as recovery would) and ``ReviewFailed`` when step 8 failed (record
    ``failed``, draft discarded, source untouched). The brief is stored in one transaction under
    the main's lock, before the seed: a crash after it leaves a ``prepared`` record no longer
    waiting, which recovery fails after its grace, discarding the draft.
    """
    expired = False
    with transaction.atomic():
        store.lock_main_state(session_id)
        record = _waiting_locked(session_id)
        edited = edited_brief(record.brief if brief is None else brief)
        assert record.review_until is not None
        if timezone.now() > record.review_until:
            recovery.fail_prepared(record, "the review expired")
            expired = True
        else:
            original = record.brief if edited != record.brief else None
            record = store.save_fields(
                record, brief=edited, original_brief=original, review_until=None
            )
            if record.reason == Reason.MANUAL:
                # The user's commit is the request the manual attempt's ``stable()`` checks.
                store.update_main_state(session_id, requested=True)
    if expired:
        raise NoReviewWaiting(session_id)
    outcome = attempts.commit_review(record, edited)
    if outcome.outcome is Outcome.FAILED:
        raise ReviewFailed(f"the reviewed handoff failed: {outcome.detail}")
    return outcome


def discard(session_id: Any) -> str:
    """Discard the session's waiting review: the draft archived, the record ``failed``.

    Return what was done to the draft. Raises ``NoReviewWaiting``. One transaction under the
    main's lock (a crash leaves the review waiting).
    """
    with transaction.atomic():
        store.lock_main_state(session_id)
        record = _waiting_locked(session_id)
        return recovery.fail_prepared(record, DISCARDED_AT_REVIEW)


def fail_waiting(session_id: Any, why: str, *, fault: bool) -> str:
    """Fail the session's waiting handoff with ``why`` (the record's error starts with it), the
    draft archived; return what was done to the draft.

    ``fault``: the attempt failed (declined by the user, seed flush failed): an automatic
    record counts one failure, so the next automatic attempt waits the backoff
    (``handoff.backoff.wait``); not when the source changed under it (docs/spec.md, Failure
    outcomes). Raises ``NoReviewWaiting``. One transaction under the main's lock (a crash
    leaves the review waiting).
    """
    with transaction.atomic():
        store.lock_main_state(session_id)
        record = _waiting_locked(session_id)
        done = recovery.fail_prepared(record, why)
        if fault and record.reason != Reason.MANUAL:
            wait.record_failure(session_id, timezone.now())
        return done


def decline(session_id: Any) -> str:
    """The user chose to stay in the source: ``fail_waiting`` as ``declined`` (a fault: an
    automatic attempt waits the backoff)."""
    return fail_waiting(session_id, DECLINED, fault=True)
