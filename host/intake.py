"""Input arriving for a session: validate it, log it, let plugins claim it, start or queue a turn.

The original is appended to this session's log first (docs/spec.md, Forwarding and cycles),
then ``host.signals.before_step`` is sent; a receiver answering ``StepRejected`` took the input
away (relayed it to the destination) and no turn starts here. Otherwise a user message starts a turn
on an idle session, or waits in the inbox while a turn runs. ``/compact`` typed as a user
message compacts the session instead (docs/spec.md, Compaction).

A post with a ``client_id`` is idempotent per session: a retry gets the first answer again and
adds nothing. The guard is the database's uniqueness of (session, client_id), so two retries
racing each other end with one message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from django.db import IntegrityError, transaction
from django.utils.translation import gettext

from common import sql
from host import compaction, lifecycle, log
from host.models import (
    InboxItem,
    InboxStage,
    Message,
    Role,
    Runtime,
    Session,
    SessionStatus,
    SourceKind,
)
from host.signals import StepRejected, announce, before_step
from host.usage import MAX_CALL_TOKENS, Usage

logger = logging.getLogger(__name__)

SOURCE_KINDS: dict[str, str] = {
    Role.USER: SourceKind.USER,
    Role.ASSISTANT: SourceKind.ASSISTANT,
    Role.SYSTEM: SourceKind.SYSTEM,
}
USAGE_FIELDS = ("uncached_input", "output", "cache_read", "cache_write")
MAX_CLIENT_ID = 200
TITLE_CHARS = 60


class InvalidInput(ValueError):
    """The post was refused with nothing changed; the message says why."""


class SessionClosed(InvalidInput):
    """The session is finished or disposed (a helper agent's conversation that ended): the post
    is well formed but the session takes no more input. The API answers 409, a state conflict."""


class InputElsewhere(SessionClosed):
    """The session runs in another runtime (a followed Claude Code or Codex log): its input
    belongs to that runtime's terminal, never to this product (docs/api.md, follow_sessions)."""


@dataclass(frozen=True)
class PostResult:
    """The answer to a post.

    ``message`` is the logged original; ``forwarded_to`` (session id) and ``relay_id`` are set
    when a ``before_step`` receiver took the input away (the API answers 202 then); ``created``
    is False when this answer repeats the first one for the same ``client_id``.
    """

    message: Message | None
    forwarded_to: str | None = None
    relay_id: str | None = None
    created: bool = True

    @property
    def forwarded(self) -> bool:
        """True when the input went to another session."""
        return self.forwarded_to is not None


def post_message(
    session: Session,
    *,
    role: str = "user",
    content: str,
    usage: Usage | Mapping[str, object] | None = None,
    client_id: str | None = None,
) -> PostResult:
    """Take one message for ``session`` and return what happened to it.

    ``role`` is user, assistant or system; ``content`` a non-empty string (``content`` and
    ``client_id`` without NUL characters, which PostgreSQL text cannot hold); ``usage`` the four
    buckets in tokens (``uncached_input``, ``output``, ``cache_read``, ``cache_write``,
    integers from 0 to ``MAX_CALL_TOKENS``, missing ones 0, also checked when given as a
    ``Usage``); ``client_id`` at most 200 characters. Raises ``InvalidInput`` for bad input
    and ``SessionClosed`` (an ``InvalidInput``) for a disposed or finished session and
    ``InputElsewhere`` (a ``SessionClosed``) for a session of another runtime, with
    nothing changed. A retry with a known
    ``client_id`` returns the first answer (``created`` False) whatever else it carries. Runs
    in one transaction: a crash or a failing receiver half-way leaves nothing logged, relayed
    or queued; a transaction the database killed (a deadlock) runs again whole
    (``common.sql.retried_transaction``).
    """
    buckets = _validate(role, content, usage, client_id)
    if session.runtime != Runtime.PRODUCT:
        raise InputElsewhere(
            f"this session runs in {Runtime(session.runtime).label}: type its input in its terminal"
        )
    if client_id is not None:
        first = _first_answer(session, client_id)
        if first is not None:
            return first
    if role == Role.USER and content.strip() == compaction.COMMAND:
        return _post_compact(session, client_id)
    return _take(session, role, content, buckets, client_id)


@sql.retried_transaction
def _take(
    session: Session, role: str, content: str, usage: Usage | None, client_id: str | None
) -> PostResult:
    """Log the message, let plugins claim it, start or queue its turn: one transaction, run
    again whole when the database killed it (a deadlock; ``client_id`` keeps a retry single)."""
    message = _append_once(session, role, content, usage, client_id)
    if isinstance(message, PostResult):
        return message
    _require_open(session)
    rejected = _claimed(session, message)
    if rejected is not None:
        Message.objects.filter(pk=message.pk).update(
            forwarded_to=rejected.forwarded_to, forward_relay_id=rejected.relay_id
        )
        return PostResult(message, rejected.forwarded_to, rejected.relay_id)
    if role == Role.USER:
        _title_untitled(session, content)
        _start_or_queue(session, message)
    return PostResult(message)


def _validate(
    role: str, content: object, usage: Usage | Mapping[str, object] | None, client_id: object
) -> Usage | None:
    """Check the input and return the usage buckets; raise ``InvalidInput`` with the reason."""
    if role not in SOURCE_KINDS:
        raise InvalidInput(f"role must be one of user, assistant, system; got {role!r}")
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("content must be a non-empty string")
    if client_id is not None and (
        not isinstance(client_id, str) or not client_id.strip() or len(client_id) > MAX_CLIENT_ID
    ):
        raise InvalidInput(
            f"client_id must be a non-empty string of at most {MAX_CLIENT_ID} characters"
        )
    for name, text in (("content", content), ("client_id", client_id)):
        if text is not None and "\x00" in text:
            raise InvalidInput(f"{name} must not contain NUL characters (\\x00)")
    if usage is None:
        return None
    if isinstance(usage, Usage):
        usage = asdict(usage)
    if not isinstance(usage, Mapping):
        raise InvalidInput("usage must be an object of token counts")
    unknown = sorted(set(usage) - set(USAGE_FIELDS))
    if unknown:
        expected = ", ".join(USAGE_FIELDS)
        raise InvalidInput(f"unknown usage field(s) {', '.join(unknown)}; expected {expected}")
    counts: dict[str, int] = {}
    for name, value in usage.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value <= MAX_CALL_TOKENS
        ):
            raise InvalidInput(
                f"usage.{name} must be a non-negative integer of at most {MAX_CALL_TOKENS} "
                f"(tokens), got {value!r}"
            )
        counts[name] = value
    return Usage(**counts)


def _append_once(
    session: Session, role: str, content: str, usage: Usage | None, client_id: str | None
) -> Message | PostResult:
    """Append the original and return it, or the first answer when ``client_id`` is known here.

    Appending bumps the session's revision, which holds the session row until the
    transaction ends, so concurrent posts to one session take turns; the unique
    (session, client_id) constraint makes the loser of a retry race roll back its copy.
    """
    try:
        with transaction.atomic():
            message = log.append_message(
                session,
                role=role,
                source_kind=SOURCE_KINDS[role],
                content=content,
                usage=usage,
                external_id=client_id or "",
            )
            if client_id is not None:
                Message.objects.filter(pk=message.pk).update(client_id=client_id)
                message.client_id = client_id
    except IntegrityError:
        session.refresh_from_db(fields=["revision"])
        first = _first_answer(session, client_id) if client_id is not None else None
        if first is None:
            raise
        return first
    return message


def _first_answer(session: Session, client_id: str) -> PostResult | None:
    """The answer the first post with ``client_id`` got, or None when there was none."""
    message = Message.objects.filter(session=session, client_id=client_id).first()
    if message is None:
        return None
    forwarded_to = str(message.forwarded_to) if message.forwarded_to else None
    return PostResult(message, forwarded_to, message.forward_relay_id or None, created=False)


def _require_open(session: Session) -> None:
    """Refuse input for a disposed or finished session (re-read under the transaction's lock)."""
    session.refresh_from_db(fields=["status", "archived", "blank", "turns"])
    if session.status in (SessionStatus.DISPOSED, SessionStatus.FINISHED):
        main = f"; post to its main conversation {session.parent_id}" if session.parent_id else ""
        raise SessionClosed(
            f"session {session.pk} is {session.status} and takes no more input{main}"
        )


def _claimed(session: Session, message: Message) -> StepRejected | None:
    """Send ``before_step``; return the first ``StepRejected`` a receiver answered, if any."""
    for _receiver, answer in before_step.send(sender=Session, session=session, incoming=[message]):
        if isinstance(answer, StepRejected):
            return answer
    return None


def title_from(content: str) -> str:
    """A title made of a message: its first non-empty line, single-spaced, clipped to
    ``TITLE_CHARS`` characters (an ellipsis marks the cut)."""
    line = next((" ".join(part.split()) for part in content.splitlines() if part.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _title_untitled(session: Session, content: str) -> None:
    """Give a session created without a title the title of its first user message (announced:
    the sidebar and open pages show it); a titled session keeps its own."""
    if Session.objects.filter(pk=session.pk, title="").update(title=title_from(content)):
        session.refresh_from_db(fields=["title"])
        announce(session.pk, owner_id=session.owner_id)


def _start_or_queue(session: Session, message: Message) -> None:
    """Start the turn ``message`` asks for, or queue it for the next turn while one runs."""
    if session.status == SessionStatus.RUNNING:
        InboxItem.objects.create(
            session=session, stage=InboxStage.NEXT_TURN, content=message.content, message=message
        )
    else:
        lifecycle.start_user_turn(session, message)


def _post_compact(session: Session, client_id: str | None) -> PostResult:
    """Log the ``/compact`` command, then compact the idle session (manual trigger).

    Refused with nothing changed when the session is not idle or has nothing to compact. The
    command is committed before the summary is made, so a failing summary (model error, input
    arriving meanwhile) leaves the command and a system notice saying why, and no compaction.
    """
    with transaction.atomic():
        message = _append_once(session, Role.USER, compaction.COMMAND, None, client_id)
        if isinstance(message, PostResult):
            return message
        _require_open(session)
        if session.status != SessionStatus.IDLE:
            raise InvalidInput(gettext("/compact runs when idle: the conversation is busy now."))
        if not compaction.compactable(session):
            raise InvalidInput(gettext("This conversation has nothing to compact yet."))
    try:
        compaction.compact(session, trigger="manual")
    except Exception as exc:
        logger.exception("manual compaction of session %s failed", session.pk)
        log.append_message(
            session,
            role=Role.SYSTEM,
            source_kind=SourceKind.SYSTEM,
            content=f"Compaction failed ({type(exc).__name__}: {exc}); nothing was compacted.",
        )
    return PostResult(message)
