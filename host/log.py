"""Append entries to a session's log, keeping the session row and usage projection current.

Every function here must run inside ``transaction.atomic()`` (they open one themselves): the entry,
the revision bump and the projection update land together or not at all, so a crash half-way
leaves the log as it was.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from common import sql
from host.models import Message, Session, SessionEvent, SessionEventKind, UsageProjection
from host.signals import announce, entry_appended
from host.usage import Usage


def _next_seq(session: Session) -> int:
    """Bump and return the session's revision (the log's shared sequence number).

    One statement, which holds the session row until the caller's transaction ends.
    """
    bumped = sql.increment(Session, "id", session.pk, "revision")
    if bumped is None:
        raise Session.DoesNotExist(f"session {session.pk} does not exist")
    session.revision = int(bumped[0])
    return session.revision


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
    (docs/design.md, turns; DESIGN.md, blank). ``usage`` (tokens) updates the four buckets
    and, on an assistant message, the context figure; ``response_id`` names the imported API
    response that usage belongs to (``host.importers`` counts each once). ``full_prompt``
    (tokens) marks a call that saw a clipped prompt: its small prompt does not replace the
    context figure, which becomes the larger of the current figure and ``full_prompt``, the
    estimate of the whole context. ``tool_error`` is a tool result's reported outcome (True
    failed, False succeeded, None not said). ``live`` sends ``entry_appended`` (False: an
    import, which no page shows yet).
    Raises ``IntegrityError`` on a duplicate relay id.
    """
    with transaction.atomic():
        seq = _next_seq(session)
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
            uncached_input_tokens=usage.uncached_input if usage else None,
            output_tokens=usage.output if usage else None,
            cache_read_tokens=usage.cache_read if usage else None,
            cache_write_tokens=usage.cache_write if usage else None,
        )
        _fold_usage(session, seq, role, len(content), usage, full_prompt)
        if starts_turn:
            Session.objects.filter(pk=session.pk).update(turns=F("turns") + 1)
            if Session.objects.filter(pk=session.pk, blank=True).update(blank=False):
                announce(session.pk)
            session.refresh_from_db(fields=["turns", "blank"])
        if live:
            entry_appended.send(sender=Session, session=session, entry=message)
        return message


def _fold_usage(
    session: Session, seq: int, role: str, chars: int, usage: Usage | None, full_prompt: int | None
) -> None:
    updates: dict[str, Any] = {"effective_chars": F("effective_chars") + chars}
    if usage is not None:
        updates.update(
            uncached_input_tokens=F("uncached_input_tokens") + usage.uncached_input,
            output_tokens=F("output_tokens") + usage.output,
            cache_read_tokens=F("cache_read_tokens") + usage.cache_read,
            cache_write_tokens=F("cache_write_tokens") + usage.cache_write,
        )
        if role == "assistant" and full_prompt is not None:
            updates.update(context_tokens=Greatest("context_tokens", Value(full_prompt)))
        elif role == "assistant":
            updates.update(context_tokens=usage.prompt, context_seq=seq)
    projection = UsageProjection.objects.filter(session=session)
    if not projection.update(**updates):
        # A session stored without its projection (made before it existed) gets it now.
        UsageProjection.objects.create(session=session)
        projection.update(**updates)


def append_event(
    session: Session, kind: SessionEventKind | str, data: dict[str, Any], *, live: bool = True
) -> SessionEvent:
    """Append one event (model selection, compaction, turn start, notice) to the log.

    ``live`` sends ``entry_appended`` (False: an import).
    """
    with transaction.atomic():
        event = SessionEvent.objects.create(
            session=session, seq=_next_seq(session), kind=kind, data=data
        )
        if live:
            entry_appended.send(sender=Session, session=session, entry=event)
        return event


def select_model(
    session: Session, model: str, *, source: str = "user", live: bool = True
) -> SessionEvent:
    """Record a model selection in the log and make it the session's model (``live``: see
    ``append_event``)."""
    with transaction.atomic():
        event = append_event(
            session,
            SessionEventKind.MODEL_SELECTION,
            {"model": model, "source": source},
            live=live,
        )
        Session.objects.filter(pk=session.pk).update(model=model)
        session.model = model
        return event


def record_compaction(session: Session, summary: str, *, trigger: str) -> SessionEvent:
    """Mark everything logged so far as compacted and count one compaction.

    Nothing is deleted: older messages stay, flagged ``compacted``; the effective context
    restarts from ``summary`` (its characters feed the meter) and the context figure reads 0
    until the next model call reports usage. ``trigger`` is manual or auto.
    """
    with transaction.atomic():
        Message.objects.filter(session=session, compacted=False).update(compacted=True)
        event = append_event(
            session, SessionEventKind.COMPACTION, {"trigger": trigger, "summary": summary}
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
