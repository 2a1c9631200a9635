"""What the conversation page shows: the session's log as display entries, in log order.

Messages and events share the session's sequence (``host.models``), so merging them by ``seq``
gives the log as it happened. Each entry says how to show itself: a chat bubble, a folded tool
call or result, a relay marked with the session it came from, a plugin message (a titled Markdown
card when it opens with a ``# `` heading, e.g. the handoff brief; otherwise a notice), or a
one-line notice.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from uuid import UUID

from django.db.models import QuerySet
from django.utils.functional import Promise
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from host.compaction import COMMAND as COMPACT
from host.models import Message, Role, Session, SessionEvent, SessionEventKind, SourceKind

# A compaction's trigger as the page names it (the page's language).
COMPACTION_TRIGGERS = {"manual": _("manual"), "auto": _("automatic")}


@dataclass(frozen=True)
class Entry:
    """One line of the conversation page.

    ``kind`` is one of ``user``, ``assistant``, ``tool``, ``relay``, ``plugin``, ``system`` or
    ``notice``. A ``plugin`` entry's ``title`` is its opening heading and ``text`` the Markdown
    after it; ``relayed_from`` is the session a relay came from, and ``forwarded_to`` the session
    an original posted here was relayed to (both when known).
    """

    seq: int
    kind: str
    text: str | Promise
    message: Message | None = None
    title: str | Promise = ""
    relayed_from: Session | None = None
    forwarded_to: Session | None = None


def split_heading(content: str) -> tuple[str, str] | None:
    """Split Markdown opening with a level-1 ATX heading into (heading text, the rest).

    None when the first line is no ``# `` heading. The heading's optional closing ``#``s are
    dropped (``# Title #`` -> "Title").
    """
    first, _, rest = content.lstrip("\n").partition("\n")
    if not first.startswith("# "):
        return None
    title = re.sub(r"\s+#+\s*$", "", first[2:]).strip()
    return (title, rest.strip("\n")) if title else None


def _message_entry(message: Message, sessions: _Linked) -> Entry:
    kind = message.source_kind
    if message.role == Role.TOOL or kind == SourceKind.TOOL or message.tool_name:
        label = _("Tool result") if message.role == Role.TOOL else _("Tool call")
        title = format_lazy("{} · {}", label, message.tool_name) if message.tool_name else label
        return Entry(message.seq, "tool", message.content, message, title=title)
    if kind == SourceKind.RELAY:
        source = sessions.relayed_from.get(message.relay_id or "")
        return Entry(message.seq, "relay", message.content, message, relayed_from=source)
    if kind == SourceKind.PLUGIN:
        # A plugin's titled Markdown (e.g. the handoff brief) is a card; anything else a notice.
        heading = split_heading(message.content)
        if heading is None:
            return Entry(message.seq, "notice", message.content, message)
        heading_text, rest = heading
        return Entry(message.seq, "plugin", rest, message, title=heading_text)
    if kind == SourceKind.SYSTEM or message.role == Role.SYSTEM:
        return Entry(message.seq, "system", message.content, message)
    role = "user" if message.role == Role.USER else "assistant"
    successor = sessions.forwarded_to.get(message.forwarded_to) if message.forwarded_to else None
    return Entry(message.seq, role, message.content, message, forwarded_to=successor)


def _event_text(event: SessionEvent) -> str | Promise | None:
    data = event.data or {}
    if event.kind == SessionEventKind.MODEL_SELECTION:
        return format_lazy(_("Model set to {model}"), model=data.get("model", "?"))
    if event.kind == SessionEventKind.COMPACTION:
        trigger = str(data.get("trigger", "manual"))
        return format_lazy(
            _("Conversation compacted ({trigger})"),
            trigger=COMPACTION_TRIGGERS.get(trigger, trigger),
        )
    if event.kind == SessionEventKind.NOTICE:
        text = data.get("text") or data.get("message")
        return str(text) if text else json.dumps(data, ensure_ascii=False)
    return None


@dataclass(frozen=True)
class _Linked:
    """Sessions a log's relays point at: relay id -> source, forwarded-to id -> destination."""

    relayed_from: dict[str, Session]
    forwarded_to: dict[UUID, Session]


def _linked(session: Session, messages: list[Message]) -> _Linked:
    """Find, among the owner's sessions, where relays came from and where originals went.

    A relay's source holds the originals, whose ``forward_relay_id`` is the relay's id.
    """
    relay_ids = [m.relay_id for m in messages if m.source_kind == SourceKind.RELAY and m.relay_id]
    originals = (
        Message.objects.filter(forward_relay_id__in=relay_ids, session__owner_id=session.owner_id)
        .exclude(session=session)
        .select_related("session")
        if relay_ids
        else []
    )
    targets = {m.forwarded_to for m in messages if m.forwarded_to}
    destinations = Session.objects.filter(pk__in=targets, owner_id=session.owner_id)
    return _Linked(
        relayed_from={m.forward_relay_id: m.session for m in originals},
        forwarded_to={s.pk: s for s in destinations} if targets else {},
    )


#: How many of the latest messages the page shows unless asked for the whole log.
LATEST = 200

#: Event kinds with a line of their own (``_event_text``); turn starts have none.
_SHOWN_EVENTS = (
    SessionEventKind.MODEL_SELECTION,
    SessionEventKind.COMPACTION,
    SessionEventKind.NOTICE,
)


@dataclass(frozen=True)
class Timeline:
    """The entries shown, in ``seq`` order, and how many earlier entries were left out."""

    entries: list[Entry]
    earlier: int = 0


def timeline(session: Session, *, limit: int | None = LATEST) -> Timeline:
    """Return the session's latest ``limit`` (>= 1) messages, all with None, and the events
    among them.

    Only what is shown is read: the messages newest first up to ``limit``, then the events from
    the first shown message on; ``earlier`` counts what came before that (messages and events
    that would show). Turn starts are not shown, nor model selections before the first message
    (the session's initial setup, e.g. a successor's inherited model); later model changes are.
    A typed ``/compact`` is a command, not a message: like ``/handoff`` it has no line of its
    own, and its effect shows ("Conversation compacted").
    """
    shown = _shown_messages(session)
    newest = shown.order_by("-seq")
    rows = list(newest[: limit + 1] if limit is not None else newest)[::-1]
    if limit is not None and len(rows) > limit:
        messages = rows[1:]
        start = messages[0].seq
        first_message = session.messages.order_by("seq").values_list("seq", flat=True).first()
        earlier = (
            shown.filter(seq__lt=start).count()
            + _shown_events(session, first_message).filter(seq__lt=start).count()
        )
    else:
        messages, start, earlier = rows, 0, 0
        first_message = rows[0].seq if rows else None

    linked = _linked(session, messages)
    entries = [_message_entry(m, linked) for m in messages]
    for event in _shown_events(session, first_message).filter(seq__gte=start).order_by("seq"):
        text = _event_text(event)
        if text is not None:
            entries.append(Entry(event.seq, "notice", text))
    return Timeline(sorted(entries, key=lambda e: e.seq), earlier)


def has_line(session: Session, item: Message | SessionEvent) -> bool:
    """Whether one newly appended message or event shows a line (``entry_of``): not a turn
    start, a typed ``/compact`` or a model selection before the log's first message. At most
    one query (a model selection: is there a message yet?)."""
    if isinstance(item, Message):
        return not (item.role == Role.USER and item.content == COMPACT)
    if item.kind not in _SHOWN_EVENTS:
        return False
    return item.kind != SessionEventKind.MODEL_SELECTION or session.messages.exists()


def entry_of(session: Session, item: Message | SessionEvent) -> Entry | None:
    """Return the line one newly appended message or event shows, as ``timeline`` would show
    it, or None when it has none (``has_line``). At most one query for ``has_line``, plus the
    relay look-ups of ``_linked`` for a relayed or forwarded message.
    """
    if not has_line(session, item):
        return None
    if isinstance(item, Message):
        return _message_entry(item, _linked(session, [item]))
    text = _event_text(item)
    return Entry(item.seq, "notice", text) if text is not None else None


def _shown_messages(session: Session) -> QuerySet[Message]:
    """The session's messages that have a line: all but the ``/compact`` commands typed."""
    return session.messages.exclude(role=Role.USER, content=COMPACT)


def _shown_events(session: Session, first_message: int | None) -> QuerySet[SessionEvent]:
    """The session's events that have a line: no turn starts, no model selection before
    ``first_message`` (all of them when the log has no message yet)."""
    events = session.events.filter(kind__in=_SHOWN_EVENTS)
    if first_message is None:
        return events.exclude(kind=SessionEventKind.MODEL_SELECTION)
    return events.exclude(kind=SessionEventKind.MODEL_SELECTION, seq__lt=first_message)
