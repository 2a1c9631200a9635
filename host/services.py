"""The host's implementation of every service the handoff app uses (docs/spec.md, Degradation).

``settings.HANDOFF_SERVICES`` names these classes; the handoff app builds one with no argument
each time it needs it. They take the host's ``Session`` instances or plain session ids and never
import the handoff app (the handoff app's protocols are matched structurally).

Agent presets come from ``settings.HOST_AGENT_PRESETS`` when set, else ``AGENT_PRESETS``: each
names its ``options`` (``{"model": ...}``) and its ``realm``, the services mounted inside the
agent (plan mode, compaction) that ``AgentPresets.service_for`` returns (docs/spec.md,
Degradation).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from common.reads import once
from host import agent, compaction, lifecycle, log, sessions
from host.conf import host_settings
from host.models import (
    Activity,
    InboxItem,
    InboxStage,
    Message,
    PermissionPreset,
    Role,
    Runtime,
    Session,
    SessionEvent,
    SessionEventKind,
    SessionStatus,
    SourceKind,
    Team,
    Workspace,
)
from host.models import UsageProjection as ProjectionRow
from host.signals import SIDEBAR_FIELDS, StepRejected, announce
from host.usage import measure, projection_of

DEFAULT_PRESET = "default"
# What ``effective_context`` returns of each message, and how many rows it fetches at a time
# (a log of at most that many entries is fetched at once).
CONTEXT_FIELDS = ("role", "source_kind", "content", "tool_name", "seq", "tool_error")
CONTEXT_CHUNK = 200
# The tools whose calls change files (Claude Code's edits, Codex's ``apply_patch``, and the
# shell commands of both, which move, remove, stage and commit them): their calls and results
# before the last compaction come with the effective context (the files changed and committed
# before it, which its summary may not name).
FILE_TOOLS = (
    "Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch",
    "Bash", "exec_command", "shell", "local_shell", "container.exec",
)  # fmt: skip
AGENT_PRESETS: dict[str, dict[str, Any]] = {
    "default": {"options": {}, "realm": ()},
    "planner": {"options": {}, "realm": ("plan_mode", "compaction")},
    "reviewer": {"options": {"model": "gpt-4.1"}, "realm": ("plan_mode",)},
}


def _session(ref: Session | str | UUID) -> Session:
    """Return the session ``ref`` names (an instance is returned as is)."""
    return ref if isinstance(ref, Session) else Session.objects.get(pk=ref)


def _fresh(ref: Session | str | UUID) -> Session:
    """Return the session ``ref`` names, read from the database now."""
    return Session.objects.get(pk=ref.pk if isinstance(ref, Session) else ref)


def _count(queryset: QuerySet[Any], column: str) -> Coalesce:
    """``COUNT(*)`` of ``queryset`` (filtered by ``OuterRef``) as a subquery; 0 when none."""
    counted = queryset.order_by().values(column).annotate(n=Count("pk")).values("n")[:1]
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


_FACT_COUNTS = {
    "open_activities": _count(
        Activity.objects.filter(session=OuterRef("pk"), ended__isnull=True), "session"
    ),
    "live_subagent_count": _count(
        Session.objects.filter(
            parent=OuterRef("pk"),
            status__in=[SessionStatus.IDLE, SessionStatus.RUNNING],
            archived=False,
        ),
        "parent",
    ),
    "team_members": _count(Team.members.through.objects.filter(team__lead=OuterRef("pk")), "team"),
    "pending_inbox_count": _count(
        InboxItem.objects.filter(session=OuterRef("pk"), taken=False), "session"
    ),
}


@functools.cache
def _observed() -> QuerySet[Session, Session]:
    """Every session with the ``_FACT_COUNTS`` annotated, resolved once per process: each
    ``observed_rows`` filters a clone of it (the counted subqueries are not built again)."""
    return Session.objects.annotate(**_FACT_COUNTS)


@dataclass(frozen=True)
class Observation:
    """A session read now with its blocker facts (``SessionController.observe``)."""

    session: Session
    activities: list[str]
    live_subagents: list[str]
    team_members: int
    pending_inbox: int
    hooked: bool = False


def _save(session: Session, **fields: Any) -> None:
    """Set and save ``fields``; announce the change when the sidebar row shows one of them
    (``host.signals.SIDEBAR_FIELDS``). One statement, or one transaction with the announcement
    (inside a caller's, no savepoint of its own: a failure rolls back to the caller's)."""
    for name, value in fields.items():
        setattr(session, name, value)
    if not any(name in SIDEBAR_FIELDS for name in fields):
        session.save(update_fields=[*fields, "updated"])
        return
    with transaction.atomic(savepoint=False):
        session.save(update_fields=[*fields, "updated"])
        announce(session.pk, owner_id=session.owner_id)


@once
def _session_read(session_key: UUID) -> Session | None:
    return Session.objects.filter(pk=session_key).first()


class SessionController:
    """Sessions: read, create by cwd, the blocker facts, the log writes of a handoff."""

    def get(self, session_id: Session | str | UUID) -> Session | None:
        """Return the session read now, or None (unknown or malformed id); read once per page
        request (``common.reads``)."""
        key = session_id.pk if isinstance(session_id, Session) else session_id
        try:
            return _session_read(key if isinstance(key, UUID) else UUID(str(key)))
        except (ValidationError, ValueError):
            return None

    def ids_starting_with(self, prefix: str, *, limit: int) -> list[str]:
        """Return the ids of at most ``limit`` sessions whose id starts with ``prefix``."""
        found = Session.objects.filter(pk__startswith=prefix).values_list("pk", flat=True)
        return [str(pk) for pk in found[:limit]]

    def owned_by(self, owner_id: Any) -> QuerySet[Session, Any]:
        """Return the pks of ``owner_id``'s sessions (a ``values_list`` queryset: a subquery)."""
        return Session.objects.filter(owner_id=owner_id).values_list("pk", flat=True)

    def observed_rows(
        self, session_id: Session | str | UUID | OuterRef
    ) -> QuerySet[Session, Session]:
        """Return the session's row with the counts ``observe`` reads annotated
        (``open_activities``, ``live_subagent_count``, ``team_members``,
        ``pending_inbox_count``); none for an unknown or malformed id. Not evaluated: a caller
        may filter it and use it as a subquery (``handoff.services.ObservedRows``), the
        session named then by an ``OuterRef`` to the outer query's column."""
        if isinstance(session_id, OuterRef):
            return _observed().filter(pk=session_id)
        key = session_id.pk if isinstance(session_id, Session) else session_id
        try:
            pk = UUID(str(key))
        except ValueError:
            return Session.objects.none()
        return _observed().filter(pk=pk)

    def observe(self, session_id: Session | str | UUID) -> Observation | None:
        """Return the session and its blocker facts read now, or None (unknown or malformed id).

        One query while nothing is in flight and no subagent is live (the four facts are
        counted in subqueries); the kinds and the ids are read only when there are some.
        """
        session = self.observed_rows(session_id).first()
        if session is None:
            return None
        counts: dict[str, int] = {name: getattr(session, name) for name in _FACT_COUNTS}
        live = sessions.live_subagents(session) if counts["live_subagent_count"] else None
        return Observation(
            session=session,
            activities=sessions.in_flight_activities(session) if counts["open_activities"] else [],
            live_subagents=[str(pk) for pk in live.values_list("pk", flat=True)] if live else [],
            team_members=counts["team_members"],
            pending_inbox=counts["pending_inbox_count"],
            hooked=session.hooks_seen is not None,
        )

    def create(
        self,
        *,
        owner_id: Any,
        cwd: str,
        title: str,
        agent_preset: str | None,
        runtime: str = Runtime.PRODUCT,
    ) -> Session:
        """Create an idle, blank session by cwd; no workspace is attached (docs/spec.md,
        Inheritance). A session of another ``runtime`` (a terminal successor) takes no input
        here and is filled by that runtime's session once it adopts it (``host.external``)."""
        owner = get_user_model()(pk=owner_id)  # the source's owner: known to exist
        with transaction.atomic():
            created = sessions.create_session(
                owner, cwd=cwd, title=title, agent_preset=agent_preset or DEFAULT_PRESET
            )
            if runtime != Runtime.PRODUCT:
                created.runtime = runtime
                created.save(update_fields=["runtime"])
        return created

    def effective_context(self, session: Session | str, *, after: int = 0) -> list[dict[str, Any]]:
        """Return the last compaction summary and the later messages, oldest first, the
        summary preceded by the ``FILE_TOOLS`` calls and results it compacted, each marked
        ``"compacted": True`` (2 queries, 3 after a compaction); each message carries its
        ``seq``, the summary none. With ``after`` (a ``seq``), only the messages after it (one
        query). A log longer than ``CONTEXT_CHUNK`` entries (its ``revision``, the last ``seq``,
        says so without a query) is read in chunks of that many rows (on PostgreSQL a
        server-side cursor, one ``DECLARE`` more), so the driver never holds the whole result
        next to the list; a shorter one in one plain fetch."""
        target = _session(session)
        rows = agent.effective_messages(target).values(*CONTEXT_FIELDS)
        if after:
            return list(rows.filter(seq__gt=after))
        if target.revision > CONTEXT_CHUNK:
            messages = list(rows.iterator(chunk_size=CONTEXT_CHUNK))
        else:
            messages = list(rows)
        summary = agent.compaction_summary(target)
        if not summary:
            return messages
        edits = Message.objects.filter(
            session=target, compacted=True, forwarded_to__isnull=True, tool_name__in=FILE_TOOLS
        ).order_by("seq")
        earlier = [{**row, "compacted": True} for row in edits.values(*CONTEXT_FIELDS)]
        head = {
            "role": Role.SYSTEM,
            "source_kind": "compaction",
            "content": summary,
            "tool_name": "",
        }
        return [*earlier, head, *messages]

    def seed(self, session: Session | str, content: str) -> int:
        """Append ``content`` as a plugin message (it does not clear blank); return its seq."""
        message = log.append_message(
            _session(session), role=Role.USER, source_kind=SourceKind.PLUGIN, content=content
        )
        return message.seq

    def flush(self, session: Session | str, seq: int) -> None:
        """Raise ``RuntimeError`` unless the log entry ``seq`` is stored in the database and,
        for a session another runtime runs, that runtime took the seed: the draft was adopted
        by the runtime's session (``external_id`` set, ``host.sessions.adopt_external``) on
        evidence only (docs/spec.md, Failure outcomes: "seed flush fails")."""
        target = _session(session)
        if not Message.objects.filter(session=target, seq=seq).exists():
            raise RuntimeError(f"log entry #{seq} of session {target.pk} is not stored")
        if target.runtime != Runtime.PRODUCT and not target.external_id:
            raise RuntimeError(f"no evidence that {target.runtime} received the seed")

    def rename(self, session: Session | str, title: str) -> None:
        """Set the session's title."""
        _save(_session(session), title=title[:300])

    def append_notice(self, session: Session | str, content: str) -> None:
        """Append a system notice from the plugin to the session's log."""
        log.append_message(
            _session(session), role=Role.SYSTEM, source_kind=SourceKind.PLUGIN, content=content
        )

    def select_model(self, session: Session | str, model: str) -> None:
        """Select ``model`` for the session (a model-selection entry in its log)."""
        log.select_model(_session(session), model, source="handoff")

    def is_unwoken_draft(self, session: Session | str) -> bool:
        """Return whether the session is idle, blank, not archived and no turn ever started."""
        fresh = _fresh(session)
        return (
            fresh.status == SessionStatus.IDLE
            and fresh.blank
            and not fresh.archived
            and not SessionEvent.objects.filter(
                session=fresh, kind=SessionEventKind.TURN_START
            ).exists()
            and not Message.objects.filter(session=fresh, role=Role.ASSISTANT).exists()
        )

    def archive(self, session: Session | str) -> None:
        """Archive the session (nothing is deleted)."""
        _save(_session(session), archived=True)

    def start(self, session: Session | str) -> bool:
        """Wake the session on its seed (``host.lifecycle.start_agent``) and return True; raises
        on failure. A session another runtime runs (Claude Code, Codex) starts there: return
        False, its first turn shows in its log."""
        target = _session(session)
        if target.runtime != Runtime.PRODUCT:
            return False
        lifecycle.start_agent(target)
        return True

    def relay(self, session: Session | str, *, role: str, content: str, relay_id: str) -> bool:
        """Append a relay message and let the agent answer it; False when already relayed.

        The relayed input starts a counted turn on an idle session at once (docs/design.md,
        turns); a busy (or archived) one gets it queued in its inbox, taken as its own turn when
        the running one ends. One transaction: a crash leaves neither.
        """
        target = _fresh(session)
        if Message.objects.filter(session=target, relay_id=relay_id).exists():
            return False
        try:
            with transaction.atomic():
                message = log.append_message(
                    target,
                    role=role,
                    source_kind=SourceKind.RELAY,
                    content=content,
                    relay_id=relay_id,
                )
                try:
                    if target.archived:
                        raise lifecycle.TurnRefused(f"session {target.pk} is archived")
                    lifecycle.start_user_turn(target, message)
                except lifecycle.TurnRefused:
                    InboxItem.objects.create(
                        session=target,
                        stage=InboxStage.NEXT_TURN,
                        content=content,
                        message=message,
                    )
        except IntegrityError:
            return False
        return True

    def step_rejected(self, forwarded_to: str, relay_id: str) -> StepRejected:
        """Return the ``before_step`` answer meaning "forwarded to ``forwarded_to``"."""
        return StepRejected(forwarded_to=forwarded_to, relay_id=relay_id)


class WorkspaceRegistry:
    """Workspaces by path; never registers an unknown directory (docs/spec.md, Inheritance)."""

    def resolve_by_path(self, owner_id: Any, path: str) -> Workspace | None:
        """Return the owner's workspace registered at ``path``, or None."""
        if not path:
            return None
        return Workspace.objects.filter(owner_id=owner_id, path=path).first()

    def attach(self, workspace: Workspace, session: Session | str) -> None:
        """Attach the session to ``workspace``; ``ValueError`` for another user's workspace."""
        sessions.attach(_session(session), workspace)


def agent_presets() -> Mapping[str, Mapping[str, Any]]:
    """Return the preset table: ``settings.HOST_AGENT_PRESETS`` or the built-in one."""
    configured = host_settings().agent_presets
    return AGENT_PRESETS if configured is None else configured


class AgentPresets:
    """Agent presets, their options and the services in their realm (docs/spec.md, Degradation)."""

    def exists(self, name: str) -> bool:
        """Return whether the preset exists."""
        return name in agent_presets()

    def composed_preset(self) -> str:
        """Return the deployment's default preset."""
        return DEFAULT_PRESET

    def options(self, name: str) -> Mapping[str, Any]:
        """Return the preset's options (empty for an unknown preset)."""
        return agent_presets().get(name, {}).get("options", {})

    def model_for(self, name: str, chosen: str = "") -> str:
        """Return the model a new session of preset ``name`` runs (docs/spec.md, Inheritance):
        ``chosen``, else the preset's ``model`` option, else ``HOST_DEFAULT_MODEL``."""
        return chosen or str(self.options(name).get("model") or settings.HOST_DEFAULT_MODEL)

    def service_for(self, session: Session | str, name: str) -> Any | None:
        """Return the realm's own instance of ``name`` for the session's agent, or None."""
        preset = agent_presets().get(_session(session).agent_preset, {})
        realm = {"plan_mode": PlanMode, "compaction": Compaction}
        if name in preset.get("realm", ()) and name in realm:
            return realm[name]()
        return None


class ModelSelection:
    """The latest model selection in a session's log and the default model."""

    def latest(self, session: Session | str) -> str | None:
        """Return the model of the latest model-selection entry, or None."""
        event = (
            SessionEvent.objects.filter(
                session=_session(session), kind=SessionEventKind.MODEL_SELECTION
            )
            .order_by("-seq")
            .first()
        )
        model = event.data.get("model") if event else None
        return str(model) if model else None

    def default(self) -> str:
        """Return ``settings.HOST_DEFAULT_MODEL``."""
        return str(settings.HOST_DEFAULT_MODEL)

    def window(self, model: str) -> int:
        """Return ``model``'s context window in tokens (``settings.HOST_CONTEXT_WINDOWS``)."""
        return agent.context_window(model)


class PermissionPresets:
    """Permission presets and the approval policy (docs/spec.md, Inheritance)."""

    def current(self, session: Session | str) -> str:
        """Return the session's permission preset."""
        return str(_session(session).permission_preset)

    def set(self, session: Session | str, name: str) -> None:
        """Set the permission preset; ``ValueError`` for an unknown name."""
        if name not in PermissionPreset.values:
            raise ValueError(f"unknown permission preset {name!r}")
        _save(_session(session), permission_preset=name)

    def approval_override(self, session: Session | str) -> str | None:
        """Return the approval policy the session's custom preset sets, or None."""
        return _session(session).approval_policy or None

    def set_policy(self, session: Session | str, policy: str) -> None:
        """Set the session's approval policy."""
        _save(_session(session), approval_policy=policy)


class PlanMode:
    """Plan mode of a session's agent."""

    def get(self, session: Session | str) -> bool:
        """Return whether plan mode is active."""
        return bool(_session(session).plan_mode)

    def set(self, session: Session | str, active: bool) -> None:
        """Turn plan mode on or off."""
        _save(_session(session), plan_mode=active)


class Compaction:
    """The host's compaction (``/compact`` and automatic near the window)."""

    def compact(self, session: Session | str, *, trigger: str) -> None:
        """Compact the session's older turns in place (``CompactionRefused`` when nothing is
        left to compact)."""
        compaction.compact(_fresh(session), trigger=trigger)

    def compact_if_due(self, session: Session | str, capacity: int) -> bool:
        """Compact near the window (``capacity`` tokens) when no handoff applies."""
        fresh = _fresh(session)
        return compaction.maybe_auto_compact(fresh, capacity) is not None


class UsageProjection:
    """The usage projection (docs/spec.md, Token sources, source 1): one instance per read, so
    its row is read once for both figures."""

    def __init__(self) -> None:
        self._rows: dict[Any, ProjectionRow] = {}

    def _row(self, session: Session | str) -> ProjectionRow:
        target = _session(session)
        if target.pk not in self._rows:
            self._rows[target.pk] = projection_of(target)
        return self._rows[target.pk]

    def buckets_total(self, session: Session | str) -> int:
        """Return the four buckets summed (tokens)."""
        row = self._row(session)
        return (
            row.uncached_input_tokens
            + row.output_tokens
            + row.cache_read_tokens
            + row.cache_write_tokens
        )

    def context_tokens(self, session: Session | str) -> int:
        """Return the latest call's prompt size (tokens), 0 when a compaction came after it."""
        return self._row(session).context_tokens


class TokenMeter:
    """The heuristic meter (docs/spec.md, Token sources, source 2)."""

    def measure(self, session: Session | str) -> int:
        """Return the estimated effective context (tokens)."""
        return measure(_session(session))


class LLM:
    """The summary model: the configured endpoint, else the embedded offline model."""

    @property
    def offline(self) -> bool:
        """True when no endpoint is configured (the offline summarizer is used)."""
        return not agent.llm_configured()

    def window(self) -> int:
        """Return the summary model's context window in tokens (0 when unknown)."""
        return agent.context_window(agent.llm_model())

    def complete(
        self, *, system: str, prompt: str, max_tokens: int, timeout: float, purpose: str
    ) -> str:
        """Make one call without tools asking for a JSON object; return its text."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        completion = agent.complete(
            messages, max_tokens=max_tokens, timeout=timeout, json_object=True, purpose=purpose
        )
        return agent.completion_text(completion)
