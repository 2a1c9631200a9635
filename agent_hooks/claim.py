"""A terminal successor claims the waiting brief; the route follows only on evidence.

docs/spec.md, Failure outcomes and Recovery, as they apply to a session another runtime runs:

- Commit in place: ``/clear`` runs the source's ``SessionEnd`` (reason ``clear``, kept on the
  choice with the runtime process that ran it) and then the new session's ``SessionStart``
  (source ``clear``). ``on_clear_start`` pairs them — the same ``X-Hook-Process`` within
  ``PAIR_SECONDS``, else the only one pending in that folder; two pending without a process to
  tell them apart claim nothing (the marker's new-terminal path stays) — re-checks the
  source's ``stable()`` and answers with the brief as added context, asking for the command's
  acknowledgement. The successor is the new session id ``/clear`` opened, or the same id when
  the runtime keeps it and marks a clear boundary in the log (``host.external.split_at_clear``:
  the log's rest feeds the successor).
- Commit in a new terminal: a prompt carrying the record's marker (``on_marker``) claims it
  the same way; the marker in the successor's log is the evidence. Without the product's
  hooks, the follower's import of a session whose first user record carries the marker claims
  it (``on_logged_marker``, told by ``host.signals.log_followed``) and commits at once.
- Flush before route (``settle``, at each later event of the successor): the acknowledgement
  of the answer that carried the brief, or the marker in the successor's first user record,
  is the evidence; then the successor's session takes the draft's place
  (``host.external.adopt_external``) and ``handoff.review.commit`` runs step 8 with its
  re-checks (seed, flush, route, ``committed``). Without evidence by the successor's next
  event (the answer came after the runtime's timeout) no route is installed: the record fails
  "seed flush failed" and the new session stays plain.
- ``started`` when the successor's first turn is in its log; a successor that never shows one
  is moved to ``committed-start-pending`` by recovery, and an unclaimed brief expires as a
  review does (``review_until``).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agent_hooks import briefs
from agent_hooks.models import Choice, Delivery
from agent_hooks.payload import Hook
from handoff import attempt as attempts
from handoff import recovery, review, services, store
from handoff.core.phases import Phase, Reason
from handoff.core.terminal import marker, markers_in
from handoff.exceptions import HandoffError, NoReviewWaiting
from handoff.models import HandoffRecord
from host.external import adopt_external, by_external_id, split_at_clear
from host.models import Message, Role, Session

logger = logging.getLogger(__name__)

PAIR_SECONDS = 30
"""How long after the source's ``SessionEnd(clear)`` a ``SessionStart(clear)`` pairs with it."""
SEED_FLUSH_FAILED = "seed flush failed"


def _context(record: HandoffRecord, choice: Choice, source: Session) -> dict[str, Any]:
    text = briefs.context(
        record, runtime=choice.runtime, source_title=source.title, carried=choice.blocked_prompt
    )
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def _pending_clears(owner: User) -> list[Choice]:
    since = timezone.now() - timedelta(seconds=PAIR_SECONDS)
    return list(
        Choice.objects.select_related("record")
        .filter(
            record__phase=Phase.PREPARED,
            record__source__owner=owner,
            cleared__gte=since,
            successor_key="",
        )
        .order_by("-cleared")
    )


def paired(owner: User, hook: Hook) -> Choice | None:
    """Return the choice whose source's ``/clear`` this ``SessionStart(clear)`` follows: the
    same runtime process, else the only one pending in the same folder; None otherwise."""
    pending = [choice for choice in _pending_clears(owner) if choice.runtime == hook.runtime]
    if hook.process:
        same = [choice for choice in pending if choice.cleared_process == hook.process]
        if len(same) == 1:
            return same[0]
    here = [choice for choice in pending if choice.cwd == hook.cwd]
    return here[0] if len(here) == 1 else None


def _stable(record: HandoffRecord) -> bool:
    """Re-check ``stable()`` for the waiting record; fail it (no fault) when it is not. The
    claim of a manual record is the user's commit, the request its re-checks look for (as
    ``handoff.review.commit`` sets it)."""
    controller = services.session_controller()
    if controller is None:
        return False
    state = store.find_main_state(record.source_id)
    if state is not None and record.reason == Reason.MANUAL:
        state.requested = True
    try:
        attempts.stable_source(attempts.claim_of(record, controller), state)
    except attempts.Unstable as why:
        _fail(record, f"not stable: {why}", fault=False)
        return False
    return True


def _fail(record: HandoffRecord, why: str, *, fault: bool) -> None:
    try:
        review.fail_waiting(record.source_id, why, fault=fault)
    except NoReviewWaiting:
        logger.info("record %s no longer waits; not failed again", record.pk)


def on_session_end(record: HandoffRecord, choice: Choice, hook: Hook) -> None:
    """The source's ``SessionEnd``: a ``clear`` is kept (when, which process, which folder).
    Codex names no reason (its ``reason`` is always "other"), so any of its ``SessionEnd`` is
    kept as a possible ``/clear``: only a ``SessionStart(clear)`` that pairs with it within
    ``PAIR_SECONDS`` claims anything (``paired``)."""
    if hook.text("reason") != "clear" and hook.runtime != "codex":
        return
    choice.cleared, choice.cleared_process = timezone.now(), hook.process
    choice.cwd = hook.cwd or choice.cwd
    choice.save(update_fields=["cleared", "cleared_process", "cwd"])


def _claim(choice: Choice, hook: Hook, delivery: Delivery) -> dict[str, Any] | None:
    """Claim ``choice`` for the hook's session after the re-checks; return the added context
    (None when unstable, or claimed meanwhile by another session: one conditional update, so
    two claims racing end with one)."""
    record = choice.record
    source = Session.objects.get(pk=record.source_id)
    if not _stable(record):
        return None
    claimed = Choice.objects.filter(pk=choice.pk, successor_key="").update(
        successor_key=hook.session_key, claim=delivery
    )
    if not claimed:
        return None
    choice.successor_key, choice.claim = hook.session_key, delivery
    return _context(record, choice, source)


def on_clear_start(owner: User, hook: Hook, delivery: Delivery) -> dict[str, Any] | None:
    """``SessionStart(clear)``: claim the paired choice and answer with the brief."""
    choice = paired(owner, hook)
    return _claim(choice, hook, delivery) if choice is not None else None


MARKER_IN_A_USED_SESSION = (
    "Session Handoff: this prompt carries the marker of a brief meant for a fresh session, and "
    "this session already has a conversation of its own, so it was not sent. Run the command "
    "that opens the fresh session in a new terminal, or type /clear in the session the brief "
    "was written for."
)


def on_marker(owner: User, hook: Hook, delivery: Delivery) -> dict[str, Any] | None:
    """A prompt carrying a waiting record's marker (a new terminal): claim it and answer with
    the brief as the prompt's added context (None: no waiting record has that marker). Typed
    into a session that already has a conversation of its own (the one the record hands off,
    with no ``/clear`` since, or any other), it claims nothing and is blocked saying where it
    belongs (``MARKER_IN_A_USED_SESSION``): such a session could never show the marker as
    its first prompt, the claim's evidence."""
    for prefix in markers_in(hook.text("prompt")):
        choice = (
            Choice.objects.select_related("record")
            .filter(record__phase=Phase.PREPARED, record__source__owner=owner, successor_key="")
            .filter(record__id__startswith=_uuid_prefix(prefix))
            .first()
        )
        if choice is None:
            continue
        if _used_elsewhere(choice, by_external_id(owner.pk, hook.session_key)):
            return {"decision": "block", "reason": MARKER_IN_A_USED_SESSION}
        choice.by_marker = True
        choice.save(update_fields=["by_marker"])
        found = _claim(choice, hook, delivery)
        if found is not None:
            found["hookSpecificOutput"]["hookEventName"] = hook.event
        return found
    return None


def _used_elsewhere(choice: Choice, session: Session | None) -> bool:
    """Whether ``session`` (the prompt's) has a first prompt of its own, without the record's
    marker: not a fresh session, unless it is the source's own id after a ``/clear`` that kept
    it (the log's rest past the clear feeds the successor)."""
    if session is None or not _first_prompt(session):
        return False
    if session.pk == choice.record.source_id and choice.cleared is not None:
        return False
    return not _marker_in_log(choice.record, session)


def on_logged_marker(successor: Session) -> None:
    """A followed session whose first user record carries the marker of a waiting record of
    the same owner that no session claimed (the new-terminal command run without the
    product's hooks): claim it after the ``stable()`` re-checks and commit at once (the marker
    in the successor's log is the flush's evidence). A marker of an unknown record, of another
    user's, or of one no longer waiting changes nothing; an unstable record fails (no fault)."""
    for prefix in markers_in(_first_prompt(successor)):
        record = (
            HandoffRecord.objects.filter(
                phase=Phase.PREPARED,
                source__owner_id=successor.owner_id,
                id__startswith=_uuid_prefix(prefix),
            )
            .exclude(source_id=successor.pk)
            .first()
        )
        if record is None:
            continue
        choice = _choice_of(record)
        if choice.successor_key or not _stable(record):
            return
        claimed = Choice.objects.filter(pk=choice.pk, successor_key="").update(
            successor_key=successor.external_id, by_marker=True
        )
        if claimed:
            choice.refresh_from_db()
            _commit(choice)
        return


def _choice_of(record: HandoffRecord) -> Choice:
    """The record's choice, made with its source's runtime and folder when no hook made it."""
    source = Session.objects.get(pk=record.source_id)
    found, _ = Choice.objects.select_related("record").get_or_create(
        record=record, defaults={"runtime": source.runtime, "cwd": source.cwd}
    )
    return found


def _uuid_prefix(hex12: str) -> str:
    """The first 12 hex digits of a UUID as its text starts (``xxxxxxxx-xxxx``)."""
    return f"{hex12[:8]}-{hex12[8:]}"


def _first_prompt(session: Session) -> str:
    """The text of the session's first user record ("" before it has one)."""
    first = (
        Message.objects.filter(session=session, role=Role.USER, source_kind="user")
        .order_by("seq")
        .values_list("content", flat=True)
        .first()
    )
    return first or ""


def _marker_in_log(record: HandoffRecord, session: Session | None) -> bool:
    return session is not None and marker(record.pk) in _first_prompt(session)


def settle(owner: User, hook: Hook) -> None:
    """At each event of a claiming successor: commit on evidence, fail a claim whose answer was
    never acknowledged, and record ``started`` once its first turn is in its log."""
    for choice in Choice.objects.select_related("record", "claim").filter(
        record__source__owner=owner,
        record__phase=Phase.PREPARED,
        successor_key=hook.session_key,
    ):
        if choice.claim_id == hook.delivery:
            continue
        session = by_external_id(owner.pk, hook.session_key)
        acked = choice.claim is not None and choice.claim.acked is not None
        if acked and not choice.by_marker or _marker_in_log(choice.record, session):
            _commit(choice)
        elif not choice.by_marker:
            _fail(
                choice.record,
                f"{SEED_FLUSH_FAILED}: the runtime did not acknowledge the brief in time",
                fault=True,
            )
    successor = by_external_id(owner.pk, hook.session_key)
    if successor is not None:
        started(successor)


def on_ack(delivery: Delivery) -> None:
    """The command acknowledged ``delivery``: a claim it carried commits now."""
    choice = Choice.objects.select_related("record").filter(claim=delivery).first()
    if choice is not None and choice.record.phase == Phase.PREPARED and not choice.by_marker:
        _commit(choice)


def _commit(choice: Choice) -> None:
    """The successor's session takes the draft's place, then step 8 runs (re-checks, seed,
    flush, route). A successor that cannot take it fails the record ("seed flush failed"); a
    failing step 8 fails it itself (``handoff.review.commit``)."""
    record = choice.record
    try:
        _take_successor(record, choice)
    except ValueError as exc:
        _fail(record, f"{SEED_FLUSH_FAILED}: {exc}", fault=True)
        return
    try:
        review.commit(record.source_id)
    except HandoffError as exc:
        logger.info("the claim of record %s did not commit: %s", record.pk, exc)


def _take_successor(record: HandoffRecord, choice: Choice) -> None:
    """Adopt the draft as the runtime's session; when the follower imported that session
    already, the record points at it instead and the draft is discarded; when ``/clear`` kept
    the source's id, the log's rest past the clear boundary feeds the draft."""
    source = Session.objects.get(pk=record.source_id)
    if record.target_id is None:
        raise ValueError("the draft no longer exists")
    if choice.successor_key == source.external_id:  # ``/clear`` kept the session id
        split_at_clear(source.pk, record.target_id, choice.runtime)
        return
    existing = by_external_id(source.owner_id, choice.successor_key)
    if existing is None:
        adopt_external(record.target_id, choice.runtime, choice.successor_key)
    elif existing.pk != record.target_id:
        with transaction.atomic():
            store.lock_main_state(record.source_id)
            recovery.discard_draft(record.source_id, record.target_id)
            store.save_fields(record, target_id=existing.pk)


def started(successor: Session) -> None:
    """Move the committed record whose successor is ``successor`` to ``started`` once its
    first turn is in its log: the runtime's answer, an assistant message (under the source's
    lock, as recovery moves it)."""
    if not Message.objects.filter(session=successor, role=Role.ASSISTANT).exists():
        return  # no answer yet: the prompt the successor was opened with is not its turn
    for record in HandoffRecord.objects.filter(target_id=successor.pk, phase=Phase.COMMITTED):
        with transaction.atomic():
            store.lock_main_state(record.source_id)
            record.refresh_from_db()
            if record.phase == Phase.COMMITTED:
                store.move(record, Phase.STARTED)
