"""Write one imported session's log in transcript order through ``host.log``.

Messages are queued until their model call's usage is known (Claude Code repeats the usage on
every line of one response and the last line's figures are the final ones; Codex reports a
call's usage after its items). Settled messages join a batch, numbered and written
``BATCH_ENTRIES`` entries at a time with ``host.log.append_entries`` (bulk inserts, one
projection update per batch), which folds the usage exactly as appending them one by one would.
Callers run inside the import's ``transaction.atomic()``: a crash half-way rolls the whole file
back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePath
from typing import Any

from django.contrib.auth.models import User

from host import log
from host.importers.errors import AlreadyImported
from host.models import (
    FollowedFile,
    Message,
    Role,
    Runtime,
    Session,
    SessionEvent,
    SessionEventKind,
    SessionStatus,
    SourceKind,
    Workspace,
)
from host.signals import SIDEBAR_FIELDS, announce
from host.usage import Usage

# Titles are the first prompt's first line, cut to about this many characters.
TITLE_CHARS = 80
# Longest model / tool name / message id / session id / workspace name the log stores.
MAX_NAME = 200
# Longest cwd (workspace path) a session stores.
MAX_PATH = 1024
# ``select_model`` source for models read from a transcript.
MODEL_SOURCE = "transcript"
# Log entries (messages, model selections, turn starts) a writer batches before writing them.
BATCH_ENTRIES = 1000


def title_of(text: str) -> str:
    """Return the first non-blank line of ``text``, cut to ``TITLE_CHARS`` with an ellipsis."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


@dataclass
class Pending:
    """A message read from the transcript and not yet appended (usage may still arrive)."""

    role: str
    source_kind: str
    content: str
    tool_name: str = ""
    external_id: str = ""
    starts_turn: bool = False
    model: str = ""
    usage: Usage | None = None
    response_id: str = ""
    tool_error: bool | None = None
    carrier: bool = False
    """Made only to carry a call's usage (the call left no visible message)."""


@dataclass(frozen=True)
class _ModelSelection:
    """A model selection waiting in the batch (it is logged before the message that used it)."""

    model: str


@dataclass
class SessionWriter:
    """Appends one session's messages and events, keeping what the finish step writes back.

    ``cwd`` (latest seen) and ``context_window`` (tokens, 0 = unknown) are written to the session
    by ``finish``, with the title and, for subagents, the status ``finished``. ``known`` (the
    external ids the session has already) and ``known_compactions`` (how many of the log's
    first compactions it has recorded) make a re-read of a replaced log add only what is new.
    """

    session: Session
    cwd: str = ""
    context_window: int = 0
    title: str = ""
    known: frozenset[str] = frozenset()
    known_compactions: int = 0
    _buffer: list[Pending] = field(default_factory=list)
    _batch: list[Pending | _ModelSelection] = field(default_factory=list)
    _open_compaction: str | None = None
    _turn_since_call: bool = False

    def add(self, pending: Pending) -> None:
        """Queue one message; a compaction still waiting for its summary is recorded first.

        The first tool result since the latest model call starts a turn: the agent answers
        the call's results with its next model call (docs/design.md, turns), so parallel
        results of one call count once.
        """
        self.close_compaction()
        if pending.external_id and pending.external_id[:MAX_NAME] in self.known:
            return
        if pending.role == Role.TOOL and not self._turn_since_call:
            pending.starts_turn = True
        self._turn_since_call = self._turn_since_call or pending.starts_turn
        if pending.starts_turn and pending.source_kind == SourceKind.USER:
            self._note_prompt(pending.content)
        self._buffer.append(pending)

    def mark_prompt(self, text: str, external_id: str) -> None:
        """Make the queued user-role message with ``text`` a prompt that starts a turn.

        Codex logs a prompt twice (the model input, then the ``user_message`` event); when the
        input is not queued the prompt is queued as a new message.
        """
        wanted = text.strip()
        for pending in reversed(self._buffer):
            if pending.role == Role.USER and pending.content.strip() == wanted:
                pending.source_kind = SourceKind.USER
                pending.starts_turn = True
                self._note_prompt(pending.content)
                return
        self.add(
            Pending(Role.USER, SourceKind.USER, text, external_id=external_id, starts_turn=True)
        )

    def attach_usage(self, usage: Usage, model: str, response_id: str = "") -> None:
        """Give ``usage`` (one model call, tokens) to the latest queued assistant message.

        ``response_id`` names the API response the call was (stored with the usage, so a later
        import sees it counted; a response an earlier import counted loses its usage when the
        batch is written). A call that left no visible message (only reasoning) gets an empty
        assistant message, a carrier, so its tokens still reach the projection. The next tool
        result starts a new turn.
        """
        self.end_call()
        for pending in reversed(self._buffer):
            if pending.role == Role.ASSISTANT:
                pending.usage, pending.response_id = usage, response_id
                return
        self._buffer.append(
            Pending(
                Role.ASSISTANT,
                SourceKind.ASSISTANT,
                "",
                model=model,
                usage=usage,
                response_id=response_id,
                carrier=True,
            )
        )

    @property
    def turn_started(self) -> bool:
        """Whether a tool result since the latest model call has started a turn already."""
        return self._turn_since_call

    def continue_turn(self) -> None:
        """Note that the current turn goes on: further tool results of the latest call start
        no turn (undoes ``end_call`` when a followed log's response was counted early)."""
        self._turn_since_call = True

    def end_call(self) -> None:
        """Note that a model call ended: the next tool result is input to a new call (a turn)."""
        self._turn_since_call = False

    def settle(self) -> None:
        """Move every queued message, in order, to the batch: their usage is final.

        The batch is written once it holds ``BATCH_ENTRIES`` messages, or at ``flush``
        (docs/design.md, "Imports write in batches").
        """
        self._batch += self._buffer
        self._buffer.clear()
        if len(self._batch) >= BATCH_ENTRIES:
            self._write()

    def flush(self) -> None:
        """Append every queued message in order: afterwards the log holds all that was added.

        A model change is logged before its message, a turn start right after its prompt.
        """
        self.settle()
        self._write()

    def write_settled(self) -> None:
        """Write the batch now (what ``settle`` moved there); messages still waiting for their
        usage stay queued. A followed log's step ends with this, so its offset is stored with
        every entry it settled (docs/design.md, following live logs)."""
        self._write()

    def select_model(self, model: str) -> None:
        """Log a model selection (source ``transcript``) when ``model`` differs from the model
        of the log at this point; it is written with the batch (``flush``)."""
        self._batch.append(_ModelSelection(model[:MAX_NAME]))

    def _write(self) -> None:
        """Number the batch and write it in one go (``host.log.append_entries``).

        Usage of a response an earlier import counted is dropped here, one look-up per batch
        (``host.importers.responses``), and with it a carrier of that usage alone; the model
        changes are decided after that, in log order.
        """
        if not self._batch:
            return
        counted = self._counted_before()
        plan: list[Pending | _ModelSelection] = []
        model = self.session.model
        for item in self._batch:
            if isinstance(item, Pending) and item.usage and item.response_id[:MAX_NAME] in counted:
                if item.carrier:
                    continue
                item.usage, item.response_id = None, ""
            chosen = item.model[:MAX_NAME]
            is_call = isinstance(item, _ModelSelection) or item.role == Role.ASSISTANT
            if is_call and chosen and chosen != model:
                plan.append(_ModelSelection(chosen))
                model = chosen
            if isinstance(item, Pending):
                plan.append(item)
        self._batch.clear()
        self._append(plan)

    def _counted_before(self) -> set[str]:
        """Return the response ids of the batch that the owner's stored messages count.

        Looked up by response id alone, so the database reads the partial index on response
        ids whatever it knows of the tables (SQLite's planner, joined to the owner's sessions,
        may scan all their messages instead); the owner is checked on the few found.
        """
        ids = {
            item.response_id[:MAX_NAME]
            for item in self._batch
            if isinstance(item, Pending) and item.usage and item.response_id
        }
        if not ids:
            return set()
        # Said again so that SQLite sees the index's condition (it does not infer it).
        found = Message.objects.filter(response_id__in=ids).exclude(response_id="")
        sessions: dict[str, set[object]] = {}
        for response_id, session_id in found.values_list("response_id", "session_id"):
            sessions.setdefault(response_id, set()).add(session_id)
        if not sessions:
            return set()
        mine = set(
            Session.objects.filter(
                owner_id=self.session.owner_id, pk__in=set().union(*sessions.values())
            ).values_list("pk", flat=True)
        )
        return {response_id for response_id, owners in sessions.items() if owners & mine}

    def _append(self, plan: list[Pending | _ModelSelection]) -> None:
        entries = sum(2 if isinstance(i, Pending) and i.starts_turn else 1 for i in plan)
        seqs = iter(log.reserve_seqs(self.session, entries))
        messages: list[Message] = []
        events: list[SessionEvent] = []
        for item in plan:
            if isinstance(item, _ModelSelection):
                selected = {"model": item.model, "source": MODEL_SOURCE}
                events.append(self._event(next(seqs), SessionEventKind.MODEL_SELECTION, selected))
                continue
            message = Message(
                session=self.session,
                seq=next(seqs),
                role=item.role,
                source_kind=item.source_kind,
                content=item.content,
                model=item.model[:MAX_NAME],
                tool_name=item.tool_name[:MAX_NAME],
                external_id=item.external_id[:MAX_NAME],
                starts_turn=item.starts_turn,
                response_id=item.response_id[:MAX_NAME],
                tool_error=item.tool_error,
                **log.usage_columns(item.usage),
            )
            messages.append(message)
            if item.starts_turn:
                # As host.lifecycle logs a live turn: the prompt, then its turn-start entry.
                turn = {"user_initiated": item.role == Role.USER, "message_seq": message.seq}
                events.append(self._event(next(seqs), SessionEventKind.TURN_START, turn))
        log.append_entries(self.session, messages, events)

    def _event(self, seq: int, kind: SessionEventKind, data: dict[str, Any]) -> SessionEvent:
        return SessionEvent(session=self.session, seq=seq, kind=kind, data=data)

    def open_compaction(self, trigger: str) -> None:
        """Start a compaction (``auto`` or ``manual``) whose summary may follow on the next line."""
        self.flush()
        self.close_compaction()
        self._open_compaction = trigger

    def close_compaction(self, summary: str = "") -> bool:
        """Record the open compaction with ``summary``; False when none was open.

        Recording marks the older messages compacted and restarts the effective context.
        """
        if self._open_compaction is None:
            return False
        trigger, self._open_compaction = self._open_compaction, None
        if self.known_compactions:
            self.known_compactions -= 1
            return True
        self._write()
        log.record_compaction(self.session, summary, trigger=trigger, live=False)
        return True

    def compaction(self, summary: str, trigger: str) -> None:
        """Record a compaction whose summary is known at once (Codex ``compacted`` lines)."""
        self.open_compaction(trigger)
        self.close_compaction(summary)

    def finish(self, fallback_title: str) -> Session:
        """Append what is queued and write title, cwd, workspace, window and status back.

        A main gets the owner's workspace at its latest cwd; a subagent (finish its main first)
        gets its main's workspace and the status ``finished`` (docs/spec.md, Deferral:
        imported subagents are finished).
        """
        self.flush()
        self.close_compaction()
        return self.write_back(fallback_title)

    def write_back(self, fallback_title: str, *, created: bool = True) -> Session:
        """Write title, cwd, workspace, window and status back as ``finish`` does, leaving what
        is queued (and an open compaction) queued; announce the session when ``created`` (as
        new) or when what its row shows changed (``host.signals.SIDEBAR_FIELDS``)."""
        cwd = self.cwd[:MAX_PATH]
        fields: dict[str, object] = {"title": self.title or fallback_title, "cwd": cwd}
        if self.context_window:
            fields["context_window"] = self.context_window
        if self.session.parent_id is not None:
            # A subagent lives in its main's workspace, whatever directory it moved to.
            fields["status"] = SessionStatus.FINISHED
            fields["workspace_id"] = (
                Session.objects.filter(pk=self.session.parent_id)
                .values_list("workspace_id", flat=True)
                .get()
            )
        elif cwd and (cwd != self.session.cwd or self.session.workspace_id is None):
            fields["workspace_id"] = workspace_for(self.session.owner_id, cwd).pk
        changed = [name for name in fields if getattr(self.session, name) != fields[name]]
        if not changed and not created:
            return self.session  # a followed log's step that changed none of these
        Session.objects.filter(pk=self.session.pk).update(**fields)
        if created or any(name in SIDEBAR_FIELDS for name in changed):
            # Once per transaction (an import's file, a followed log's step): the session shows
            # whole at commit; a step that changed nothing of its row announces nothing.
            announce(self.session.pk, created=created, owner_id=self.session.owner_id)
        self.session.refresh_from_db()
        return self.session

    def state(self) -> dict[str, Any]:
        """Return what this writer holds as JSON-ready values: ``restore`` makes it again.

        Shape: ``{"session": id, "cwd", "context_window", "title", "buffer": [Pending as a
        dict, usage as its four buckets], "open_compaction", "turn_since_call", "rereading":
        bool (``known`` is read again from the session), "known_compactions"}``.
        """
        return {
            "session": str(self.session.pk),
            "cwd": self.cwd,
            "context_window": self.context_window,
            "title": self.title,
            "buffer": [asdict(pending) for pending in self._buffer],
            "open_compaction": self._open_compaction,
            "turn_since_call": self._turn_since_call,
            "rereading": bool(self.known),
            "known_compactions": self.known_compactions,
        }

    @classmethod
    def restore(cls, state: dict[str, Any]) -> SessionWriter:
        """Return the writer ``state()`` described, on its session as stored now.

        Raises ``Session.DoesNotExist`` when the session was deleted meanwhile.
        """
        buffer = [
            Pending(**{**item, "usage": Usage(**item["usage"]) if item["usage"] else None})
            for item in state["buffer"]
        ]
        session = Session.objects.get(pk=state["session"])
        known = resumed_writer(session).known if state["rereading"] else frozenset()
        return cls(
            session,
            known=known,
            known_compactions=state["known_compactions"],
            cwd=state["cwd"],
            context_window=state["context_window"],
            title=state["title"],
            _buffer=buffer,
            _open_compaction=state["open_compaction"],
            _turn_since_call=state["turn_since_call"],
        )

    def _note_prompt(self, content: str) -> None:
        if not self.title:
            self.title = title_of(content)


def workspace_for(owner_id: int, path: str) -> Workspace:
    """Return the workspace of the user ``owner_id`` at ``path`` (a cwd), creating it named
    after its last part."""
    workspace, _ = Workspace.objects.get_or_create(
        owner_id=owner_id, path=path, defaults={"name": (PurePath(path).name or path)[:MAX_NAME]}
    )
    return workspace


def new_session(
    owner: User,
    external_id: str,
    *,
    path: Path,
    parent: Session | None = None,
    rereading: Session | None = None,
) -> SessionWriter:
    """Create the session for a transcript and return its writer.

    Raises ``AlreadyImported`` when a main with this ``external_id`` (the transcript's session
    id, cut to ``MAX_NAME``) already exists for ``owner``: re-importing a file adds nothing;
    except a successor draft its runtime's session adopted (``adopted``), which the log fills.
    ``rereading`` (a log followed again from its start because it was replaced) is the session
    the log fed: when it, or one of its subagents, has ``external_id``, that session's writer is
    returned, knowing what it has.
    """
    external_id = external_id[:MAX_NAME]
    if rereading is not None:
        fed = Session.objects.filter(owner=owner, external_id=external_id)
        found = fed.filter(pk=rereading.pk).first() or fed.filter(parent=rereading).first()
        if found is not None:
            return resumed_writer(found)
    if parent is None:
        existing = Session.objects.filter(owner=owner, external_id=external_id).first()
        if existing is not None and adopted(existing):
            return resumed_writer(existing)
        if existing is not None:
            raise AlreadyImported(path, external_id, str(existing.pk))
    session = Session.objects.create(owner=owner, external_id=external_id, parent=parent)
    return SessionWriter(session)


def adopted(session: Session) -> bool:
    """Return whether ``session`` is a draft a runtime's session adopted and no log fed yet
    (``host.sessions.adopt_external``: a handoff's successor opened in Claude Code or Codex)."""
    return (
        session.runtime != Runtime.PRODUCT
        and not FollowedFile.objects.filter(session=session).exists()
        and not Message.objects.filter(session=session).exclude(external_id="").exists()
    )


def resumed_writer(session: Session) -> SessionWriter:
    """Return a writer appending to ``session`` that skips the messages it has (by external id)
    and its log's first ``session.compactions`` compactions: a log read again from its start."""
    ids = Message.objects.filter(session=session).exclude(external_id="")
    return SessionWriter(
        session,
        cwd=session.cwd,
        context_window=session.context_window,
        title=session.title,
        known=frozenset(ids.values_list("external_id", flat=True)),
        known_compactions=session.compactions,
    )
