"""Append entries to a session's log, keeping the session row and usage projection current.

Every function here must run inside ``transaction.atomic()`` (they open one themselves): the entry,
the revision bump and the projection update land together or not at all, so a crash half-way
leaves the log as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from common import sql
from host.models import (
    Message,
    Role,
    Session,
    SessionEvent,
    SessionEventKind,
    UsageProjection,
)
from host.signals import announce, entry_appended
from host.usage import Usage

# Messages per INSERT statement when entries are appended at once. It bounds a statement's size:
# PostgreSQL would take a whole batch in one statement, its text held several times over in
# memory (a batch of 1 000 long tool results: megabytes); SQLite's parameter limit cuts sooner.
INSERT_ROWS = 200


_guard: ContextVar[Callable[[Session], None] | None] = ContextVar("log_guard", default=None)


@contextmanager
def guarded(check: Callable[[Session], None]) -> Iterator[None]:
    """Run ``check(session)`` in every append of this thread while the block runs.

    The check runs inside the append's transaction, right after the session's row is locked,
    so nothing that also locks the row first (ending a turn) can change its answer before the
    commit; whatever it raises propagates with nothing appended. The agent's task fences a
    turn's writes by its lease this way (``host.turn_lease.hold``; docs/design.md, "A turn's
    writes are fenced by its lease"). Threads started inside the block are not guarded.
    """
    token = _guard.set(check)
    try:
        yield
    finally:
        _guard.reset(token)


def reserve_seqs(session: Session, count: int) -> range:
    """Number ``count`` entries about to be appended to the log: return their sequence numbers.

    The revision moves past them in one statement, which holds the session row until the
    caller's transaction ends (so no other writer takes them), after the ``guarded`` check, if
    any. Raises ``Session.DoesNotExist`` when the session is gone.
    """
    bumped = sql.increment(Session, "id", session.pk, "revision", by=count)
    if bumped is None:
        raise Session.DoesNotExist(f"session {session.pk} does not exist")
    check = _guard.get()
    if check is not None:
        check(session)
    session.revision = int(bumped[0])
    return range(session.revision - count + 1, session.revision + 1)


def usage_columns(usage: Usage | None) -> dict[str, int | None]:
    """Return a message's four usage columns for ``usage`` (tokens), each None without it."""
    return {
        "uncached_input_tokens": usage.uncached_input if usage else None,
        "output_tokens": usage.output if usage else None,
        "cache_read_tokens": usage.cache_read if usage else None,
        "cache_write_tokens": usage.cache_write if usage else None,
    }


@sql.retried_transaction
def append_message(
    session: Session,
    *,
    role: str,
    source_kind: str,
    content: str,
    usage: Usage | None = None,
    model: str = "",
    tool_name: str = "",
    external_id: str = "",
    relay_id: str | None = None,
    starts_turn: bool = False,
    response_id: str = "",
    full_prompt: int | None = None,
    tool_error: bool | None = None,
    live: bool = True,
) -> Message:
    """Append one message and fold it into the projection; return the saved message.

    ``starts_turn`` marks an input the agent answers: it counts a turn and clears ``blank``
    (docs/design.md, Turns; docs/spec.md, Terms). ``usage`` (tokens) updates the four buckets
    and, on an assistant message, the context figure; ``response_id`` names the imported API
    response that usage belongs to (``host.importers`` counts each once). ``full_prompt``
    (tokens) marks a call that saw a clipped prompt: its small prompt does not replace the
    context figure, which becomes the larger of the current figure and ``full_prompt``, the
    estimate of the whole context. ``tool_error`` is a tool result's reported outcome (True
    failed, False succeeded, None not said). ``live`` sends ``entry_appended`` (False: an
    import, which no page shows yet).
    Raises ``IntegrityError`` on a duplicate relay id.
    """
    seq = reserve_seqs(session, 1).start
    message = Message.objects.create(
        session=session,
        seq=seq,
        role=role,
        source_kind=source_kind,
        content=content,
        model=model,
        tool_name=tool_name,
        external_id=external_id,
        relay_id=relay_id,
        starts_turn=starts_turn,
        response_id=response_id,
        tool_error=tool_error,
        **usage_columns(usage),
    )
    context = (usage.prompt, seq) if usage is not None and role == Role.ASSISTANT else None
    _fold_usage(session, len(content), usage, context, full_prompt)
    if starts_turn:
        Session.objects.filter(pk=session.pk).update(turns=F("turns") + 1)
        if Session.objects.filter(pk=session.pk, blank=True).update(blank=False):
            announce(session.pk, owner_id=session.owner_id)
        session.refresh_from_db(fields=["turns", "blank"])
    if live:
        entry_appended.send(sender=Session, session=session, entry=message)
    return message


def _fold_usage(
    session: Session,
    chars: int,
    usage: Usage | None,
    context: tuple[int, int] | None,
    full_prompt: int | None = None,
) -> None:
    """Add ``chars`` and ``usage`` (tokens) to the projection in one update; ``context`` is the
    latest model call's ``(prompt tokens, message seq)``, None when no call reported usage."""
    updates: dict[str, Any] = {"effective_chars": F("effective_chars") + chars}
    if usage is not None:
        updates.update(
            uncached_input_tokens=F("uncached_input_tokens") + usage.uncached_input,
            output_tokens=F("output_tokens") + usage.output,
            cache_read_tokens=F("cache_read_tokens") + usage.cache_read,
            cache_write_tokens=F("cache_write_tokens") + usage.cache_write,
        )
    if context is not None and full_prompt is not None:
        updates.update(context_tokens=Greatest("context_tokens", Value(full_prompt)))
    elif context is not None:
        updates.update(context_tokens=context[0], context_seq=context[1])
    projection = UsageProjection.objects.filter(session=session)
    if not projection.update(**updates):
        # A session stored without its projection (made before it existed) gets it now.
        UsageProjection.objects.create(session=session)
        projection.update(**updates)


def append_entries(
    session: Session, messages: Sequence[Message], events: Sequence[SessionEvent]
) -> None:
    """Append entries numbered by ``reserve_seqs`` (unsaved, each list in log order) at once.

    The log and the session end as if each entry had been appended alone (``append_message``,
    ``append_event``, ``select_model``, all with ``live=False``): the projection takes the
    messages' characters and usage buckets (tokens), its context figure the prompt of the last
    assistant message with usage; each ``starts_turn`` message counts a turn, and the first
    clears ``blank`` (announced); the last model-selection event's model becomes the session's.
    A few statements whatever the count: one insert per table (split where the database limits
    a statement's parameters), one projection update, one session update and one read back when
    turns or the model changed. Sends no ``entry_appended`` (for imports, which no page shows
    before they commit). Raises ``IntegrityError`` when a number is taken (not reserved).
    See docs/design.md, "Imports write in batches".
    """
    # No savepoint of its own inside the caller's transaction: a failure here fails that.
    with transaction.atomic(savepoint=False):
        Message.objects.bulk_create(messages, batch_size=INSERT_ROWS)
        SessionEvent.objects.bulk_create(events)
        usage: Usage | None = None
        context: tuple[int, int] | None = None
        for message in messages:
            call = _usage_of(message)
            if call is None:
                continue
            usage = call if usage is None else usage + call
            if message.role == Role.ASSISTANT:
                context = (call.prompt, message.seq)
        if messages:
            chars = sum(len(message.content) for message in messages)
            _fold_usage(session, chars, usage, context)
        session_updates: dict[str, Any] = {}
        turns = sum(message.starts_turn for message in messages)
        if turns:
            session_updates["turns"] = F("turns") + turns
        models = [e.data["model"] for e in events if e.kind == SessionEventKind.MODEL_SELECTION]
        if models:
            session_updates["model"] = models[-1]
        if not session_updates:
            return
        Session.objects.filter(pk=session.pk).update(**session_updates)
        cleared = turns and session.blank  # a session once not blank never is again
        if cleared and Session.objects.filter(pk=session.pk, blank=True).update(blank=False):
            announce(session.pk, owner_id=session.owner_id)
        session.refresh_from_db(fields=["turns", "blank", "model"])


def _usage_of(message: Message) -> Usage | None:
    """Return the usage a message carries (tokens), None when it carries none."""
    if message.output_tokens is None:
        return None
    return Usage(
        message.uncached_input_tokens or 0,
        message.output_tokens,
        message.cache_read_tokens or 0,
        message.cache_write_tokens or 0,
    )


@sql.retried_transaction
def append_event(
    session: Session, kind: SessionEventKind | str, data: dict[str, Any], *, live: bool = True
) -> SessionEvent:
    """Append one event (model selection, compaction, turn start, notice) to the log.

    ``live`` sends ``entry_appended`` (False: an import).
    """
    event = SessionEvent.objects.create(
        session=session, seq=reserve_seqs(session, 1).start, kind=kind, data=data
    )
    if live:
        entry_appended.send(sender=Session, session=session, entry=event)
    return event


def select_model(
    session: Session, model: str, *, source: str = "user", live: bool = True
) -> SessionEvent:
    """Record a model selection in the log and make it the session's model (``live``: see
    ``append_event``). One transaction; inside a caller's, no savepoint of its own: a failure
    rolls back to the caller's."""
    with transaction.atomic(savepoint=False):
        event = append_event(
            session,
            SessionEventKind.MODEL_SELECTION,
            {"model": model, "source": source},
            live=live,
        )
        Session.objects.filter(pk=session.pk).update(model=model)
        session.model = model
        return event


def record_compaction(
    session: Session, summary: str, *, trigger: str, live: bool = True
) -> SessionEvent:
    """Mark everything logged so far as compacted and count one compaction.

    Nothing is deleted: older messages stay, flagged ``compacted``; the effective context
    restarts from ``summary`` (its characters feed the meter) and the context figure reads 0
    until the next model call reports usage. ``trigger`` is manual or auto; ``live`` as for
    ``append_event`` (False: an import, which announces its entries itself or not at all).
    """
    with transaction.atomic():
        Message.objects.filter(session=session, compacted=False).update(compacted=True)
        event = append_event(
            session,
            SessionEventKind.COMPACTION,
            {"trigger": trigger, "summary": summary},
            live=live,
        )
        Session.objects.filter(pk=session.pk).update(compactions=F("compactions") + 1)
        session.refresh_from_db(fields=["compactions"])
        UsageProjection.objects.get_or_create(session=session)
        # The latest call's prompt is no longer the current context: the next call measures it.
        UsageProjection.objects.filter(session=session).update(
            effective_chars=len(summary), context_tokens=0, context_seq=0
        )
        return event


def replace_usage(session: Session, response_id: str, usage: Usage) -> None:
    """Give the message carrying ``response_id``'s usage the figures ``usage`` (tokens) instead.

    For a response whose lines arrived after it was counted (a followed log appended to while
    the response was still written): the projection's buckets move by the difference, and the
    context figure follows when that message is still the latest call. No message carrying
    ``response_id`` (the response was not counted here): nothing changes.
    """
    with transaction.atomic():
        message = Message.objects.filter(session=session, response_id=response_id).first()
        if message is None:
            return
        before = Usage(
            message.uncached_input_tokens or 0,
            message.output_tokens or 0,
            message.cache_read_tokens or 0,
            message.cache_write_tokens or 0,
        )
        Message.objects.filter(pk=message.pk).update(
            uncached_input_tokens=usage.uncached_input,
            output_tokens=usage.output,
            cache_read_tokens=usage.cache_read,
            cache_write_tokens=usage.cache_write,
        )
        projection = UsageProjection.objects.filter(session=session)
        projection.update(
            uncached_input_tokens=F("uncached_input_tokens")
            + (usage.uncached_input - before.uncached_input),
            output_tokens=F("output_tokens") + (usage.output - before.output),
            cache_read_tokens=F("cache_read_tokens") + (usage.cache_read - before.cache_read),
            cache_write_tokens=F("cache_write_tokens") + (usage.cache_write - before.cache_write),
        )
        projection.filter(context_seq=message.seq).update(context_tokens=usage.prompt)
