"""Crash recovery of unfinished records (docs/spec.md, Recovery).

Run on start-up (``manage.py recover_handoffs``) and before a new attempt on a source whose
earlier attempt looks stuck. A record is stuck when it has not changed for a while: a
``summarizing`` one past ``settings.HANDOFF_SUMMARIZE_TIMEOUT`` seconds, any other past
``settings.HANDOFF_RECOVERY_GRACE`` seconds (default 60), so a live attempt in another worker is
left alone; a ``prepared`` record waiting for review (``review_until`` set) is stuck only once
that time has passed (``settings.HANDOFF_REVIEW_TIMEOUT``, default 24 h). The mapping:

| stuck record                                   | becomes                  | and            |
|------------------------------------------------|--------------------------|----------------|
| a redirect exists, record not yet committed     | committed-start-pending  | target kept    |
| summarizing past its timeout                    | failed                   |                |
| prepared, waiting for review, before its time   | (left alone)             |                |
| prepared, waiting for review past its time      | failed                   | draft archived |
|                                                 |                          | ("review       |
|                                                 |                          | expired")      |
| prepared, draft exists, no redirect             | failed                   | draft archived |
|                                                 |                          | if still an    |
|                                                 |                          | unwoken draft  |
| prepared without a draft                        | failed                   |                |
| committed whose start did not happen            | committed-start-pending  | target kept    |
| committed whose successor was woken             | started                  |                |

A record never moves backwards (``handoff.store.move``). Whatever a manual (``now``) record
becomes, its attempt has ended, so the main's ``requested`` is cleared in the same transaction
(docs/spec.md, Switches): a worker killed during a ``now`` attempt leaves no request behind
for the next message to act on.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from handoff import conf, services, store
from handoff.core.phases import IN_PROGRESS_PHASES, Phase, Reason
from handoff.exceptions import PhaseError
from handoff.models import HandoffRecord, Redirect

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recovered:
    """One record recovery moved: its id, the phases before and after, and what was done."""

    record: str
    before: str
    after: str
    action: str

    def as_dict(self) -> dict[str, str]:
        """Return ``{"record", "before", "after", "action"}``."""
        return asdict(self)


def summarize_timeout() -> timedelta:
    """Return how long a record may stay ``summarizing``."""
    return timedelta(seconds=conf.handoff_settings().summarize_timeout)


def grace() -> timedelta:
    """Return how long a prepared or committed record may stay unchanged."""
    return timedelta(seconds=conf.handoff_settings().recovery_grace)


def is_stuck(record: HandoffRecord, now: datetime) -> bool:
    """Return whether ``record`` has been unchanged longer than its phase allows (a review
    waits until its ``review_until``)."""
    if record.phase == Phase.PREPARED and record.review_until is not None:
        return now > record.review_until
    allowed = summarize_timeout() if record.phase == Phase.SUMMARIZING else grace()
    return now - record.updated > allowed


def _routed(record: HandoffRecord) -> bool:
    return Redirect.objects.filter(source_id=record.source_id, record=record).exists()


def discard_draft(source_id: Any, draft_id: Any) -> tuple[bool, str]:
    """Archive ``draft_id``, the successor an attempt on ``source_id`` created, if it is still an
    unwoken draft; return (archived, what happened). The one draft discard
    (docs/spec.md, Failure outcomes): of a failed attempt, an expired or discarded review, a
    crashed attempt.

    Only archived, never deleted; kept when the source's route leads to it (committed, even
    unstarted), when it was woken, or when no session controller can archive it.
    """
    redirect = store.redirect_of(source_id)
    if redirect is not None and str(redirect.destination_id) == str(draft_id):
        return False, f"successor {draft_id} kept (the route to it is committed)"
    controller = services.session_controller()
    if controller is None:
        return False, f"draft {draft_id} kept: no session controller to archive it"
    if not controller.is_unwoken_draft(str(draft_id)):
        return False, f"draft {draft_id} kept (it was woken)"
    controller.archive(str(draft_id))
    return True, f"draft {draft_id} archived"


def _successor_woken(record: HandoffRecord) -> bool:
    controller = services.session_controller()
    return controller is not None and not controller.is_unwoken_draft(str(record.target_id))


def recover_record(record: HandoffRecord) -> Recovered | None:
    """Apply the mapping to one stuck record; return what was done (``None``: nothing).

    Runs in one transaction under the source's main-state lock, the lock the commit step holds
    while it installs the route: a slow attempt cannot commit between recovery's look at the
    route and its discard of the draft, so a routed successor is never archived (invariant 4).
    The record is re-read under the lock. A manual record that moved clears the main's
    ``requested`` in that transaction: the request was that attempt's, also when the lingering
    request itself started the attempt now recovering it (``handoff.attempt.mark_attempt``),
    which then finds the request gone and stops. Raises ``PhaseError`` when another process
    moved the record meanwhile (nothing written).
    """
    seen = (record.phase, record.updated)
    with transaction.atomic():
        store.lock_main_state(record.source_id)
        record.refresh_from_db()
        if (record.phase, record.updated) != seen:
            raise PhaseError(f"record {record.pk} moved meanwhile; recovery leaves it")
        done = _apply_mapping(record)
        if done is not None and record.reason == Reason.MANUAL:
            store.clear_requested(record.source_id)
        return done


def _apply_mapping(record: HandoffRecord) -> Recovered | None:
    before = Phase(record.phase)
    if before in IN_PROGRESS_PHASES and _routed(record):
        moved = store.move(record, Phase.COMMITTED_START_PENDING)
        return Recovered(str(record.pk), before, moved.phase, "route exists; successor kept")
    if before == Phase.SUMMARIZING:
        store.move(record, Phase.FAILED, error="recovery: the summary did not finish in time")
        return Recovered(str(record.pk), before, Phase.FAILED, "summary timed out")
    if before == Phase.PREPARED:
        why = "the review expired" if record.review_until is not None else "recovery"
        action = fail_prepared(record, why)
        return Recovered(str(record.pk), before, Phase.FAILED, action)
    if before == Phase.COMMITTED:
        if _successor_woken(record):
            store.move(record, Phase.STARTED)
            return Recovered(str(record.pk), before, Phase.STARTED, "successor was started")
        store.move(
            record,
            Phase.COMMITTED_START_PENDING,
            error="recovery: the successor was not started; open it from the record",
        )
        return Recovered(str(record.pk), before, Phase.COMMITTED_START_PENDING, "start pending")
    return None


def fail_prepared(record: HandoffRecord, why: str) -> str:
    """Fail a ``prepared`` record: archive its draft if still unwoken, keep it otherwise.

    Return what was done to the draft; the record's error is ``why: <that>``. Call it under
    the source's main-state lock (``recover_record``, ``handoff.review.discard``). Raises
    ``PhaseError`` when the record moved meanwhile.
    """
    if record.target_id:
        archived, action = discard_draft(record.source_id, record.target_id)
    else:
        archived, action = False, "no draft existed"
    target = None if archived else record.target_id
    store.move(record, Phase.FAILED, target_id=target, review_until=None, error=f"{why}: {action}")
    return action


def recover(now: datetime | None = None) -> list[Recovered]:
    """Recover every stuck unfinished record; return what was done, oldest record first.

    Each record is handled on its own: one that another process moved meanwhile is skipped.
    Each move is one transaction; a crash half-way leaves the records not yet handled as they
    were, and the next run continues with them.
    """
    now = now or timezone.now()
    done: list[Recovered] = []
    for record in store.unfinished_records():
        if not is_stuck(record, now):
            continue
        try:
            result = recover_record(record)
        except PhaseError:
            logger.info("record %s moved meanwhile; recovery skipped it", record.pk)
            continue
        if result is not None:
            done.append(result)
    return done
