"""The host's implementation of every service the handoff app uses (seed 003 §6.1–6.4).

``settings.HANDOFF_SERVICES`` names these classes; the handoff app builds one with no argument
each time it needs it. They take the host's ``Session`` instances or plain session ids and never
import the handoff app (the handoff app's protocols are matched structurally).

Agent presets come from ``settings.HOST_AGENT_PRESETS`` when set, else ``AGENT_PRESETS``: each
names its ``options`` (``{"model": ...}``) and its ``realm``, the services mounted inside the
agent (plan mode, compaction) that ``AgentPresets.service_for`` returns (seed 003 §6.4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from host import agent, compaction, log, runtime, sessions
from host.models import (
    EventKind,
    InboxItem,
    InboxStage,
    Message,
    PermissionPreset,
    Role,
    Session,
    SessionEvent,
    SessionStatus,
    SourceKind,
    Workspace,
)
from host.signals import StepRejected
from host.usage import context_tokens, measure, session_usage

DEFAULT_PRESET = "default"
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


def _save(session: Session, **fields: Any) -> None:
    """Set ``fields`` and save them with ``save()`` (so post_save receivers see the change)."""
    for name, value in fields.items():
        setattr(session, name, value)
    session.save(update_fields=[*fields, "updated"])


class SessionController:
    """Sessions: read, create by cwd, the blocker facts, the log writes of a handoff."""

    def get(self, session_id: Session | str | UUID) -> Session | None:
        """Return the session read now, or None (unknown or malformed id)."""
        key = session_id.pk if isinstance(session_id, Session) else session_id
        try:
            return Session.objects.filter(pk=key).first()
        except (ValidationError, ValueError):
            return None

    def create(self, *, owner_id: Any, cwd: str, title: str, agent_preset: str | None) -> Session:
        """Create an idle, blank session by cwd; no workspace is attached (seed 003 §6.5)."""
        owner = get_user_model().objects.get(pk=owner_id)
        return sessions.create_session(
            owner, cwd=cwd, title=title, agent_preset=agent_preset or DEFAULT_PRESET
        )

    def in_flight(self, session: Session | str) -> list[str]:
        """Return the kinds of the activities in flight for the session."""
        return sessions.in_flight_activities(_session(session))

    def live_subagents(self, session: Session | str) -> list[str]:
        """Return the ids of the session's live subagents."""
        live = sessions.live_subagents(_session(session))
        return [str(pk) for pk in live.values_list("pk", flat=True)]

    def team_size(self, session: Session | str) -> int:
        """Return the member count of the team the session leads (0 when none)."""
        return sessions.team_size(_session(session))

    def pending_inbox(self, session: Session | str) -> int:
        """Return how many queued inbox items are not taken yet."""
        return sessions.pending_inbox(_session(session))

    def effective_context(self, session: Session | str) -> list[dict[str, str]]:
        """Return the last compaction summary and the later messages, oldest first."""
        context = agent.effective_context(_session(session))
        entries = []
        if context.summary:
            entries.append(
                {
                    "role": Role.SYSTEM,
                    "source_kind": "compaction",
                    "content": context.summary,
                    "tool_name": "",
                }
            )
        entries += [
            {
                "role": m.role,
                "source_kind": m.source_kind,
                "content": m.content,
                "tool_name": m.tool_name,
            }
            for m in context.messages
        ]
        return entries

    def seed(self, session: Session | str, content: str) -> int:
        """Append ``content`` as a plugin message (it does not clear blank); return its seq."""
        message = log.append_message(
            _session(session), role=Role.USER, source_kind=SourceKind.PLUGIN, content=content
        )
        return message.seq

    def flush(self, session: Session | str, seq: int) -> None:
        """Raise ``RuntimeError`` unless the log entry ``seq`` is stored in the database."""
        if not Message.objects.filter(session=_session(session), seq=seq).exists():
            raise RuntimeError(f"log entry #{seq} of session {_session(session).pk} is not stored")

    def rename(self, session: Session | str, title: str) -> None:
        """Set the session's title."""
        _save(_fresh(session), title=title[:300])

    def append_notice(self, session: Session | str, content: str) -> None:
        """Append a system notice from the plugin to the session's log."""
        log.append_message(
            _session(session), role=Role.SYSTEM, source_kind=SourceKind.PLUGIN, content=content
        )

    def select_model(self, session: Session | str, model: str) -> None:
        """Select ``model`` for the session (a model-selection entry in its log)."""
        log.select_model(_fresh(session), model, source="handoff")

    def is_unwoken_draft(self, session: Session | str) -> bool:
        """Return whether the session is idle, blank, not archived and no turn ever started."""
        fresh = _fresh(session)
        return (
            fresh.status == SessionStatus.IDLE
            and fresh.blank
            and not fresh.archived
            and not SessionEvent.objects.filter(session=fresh, kind=EventKind.TURN_START).exists()
            and not Message.objects.filter(session=fresh, role=Role.ASSISTANT).exists()
        )

    def archive(self, session: Session | str) -> None:
        """Archive the session (nothing is deleted)."""
        _save(_fresh(session), archived=True)

    def start(self, session: Session | str) -> None:
        """Wake the session on its seed (``host.runtime.start_agent``); raises on failure."""
        runtime.start_agent(_fresh(session))

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
                        raise runtime.TurnRefused(f"session {target.pk} is archived")
                    runtime.start_user_turn(target, message)
                except runtime.TurnRefused:
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
    """Workspaces by path; never registers an unknown directory (seed 003 §6.5)."""

    def resolve_by_path(self, owner_id: Any, path: str) -> Workspace | None:
        """Return the owner's workspace registered at ``path``, or None."""
        if not path:
            return None
        return Workspace.objects.filter(owner_id=owner_id, path=path).first()

    def attach(self, workspace: Workspace, session: Session | str) -> None:
        """Attach the session to ``workspace``; ``ValueError`` for another user's workspace."""
        sessions.attach(_fresh(session), workspace)


def agent_presets() -> Mapping[str, Mapping[str, Any]]:
    """Return the preset table: ``settings.HOST_AGENT_PRESETS`` or the built-in one."""
    return getattr(settings, "HOST_AGENT_PRESETS", AGENT_PRESETS)


class AgentPresets:
    """Agent presets, their options and the services inside their realm (seed 003 §6.4)."""

    def exists(self, name: str) -> bool:
        """Return whether the preset exists."""
        return name in agent_presets()

    def composed_preset(self) -> str:
        """Return the deployment's default preset."""
        return DEFAULT_PRESET

    def options(self, name: str) -> Mapping[str, Any]:
        """Return the preset's options (empty for an unknown preset)."""
        return agent_presets().get(name, {}).get("options", {})

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
            SessionEvent.objects.filter(session=_session(session), kind=EventKind.MODEL_SELECTION)
            .order_by("-seq")
            .first()
        )
        model = event.data.get("model") if event else None
        return str(model) if model else None

    def default(self) -> str:
        """Return ``settings.HOST_DEFAULT_MODEL``."""
        return str(settings.HOST_DEFAULT_MODEL)


class PermissionPresets:
    """Permission presets and the approval policy (seed 003 §6.1)."""

    def current(self, session: Session | str) -> str:
        """Return the session's permission preset."""
        return str(_fresh(session).permission_preset)

    def set(self, session: Session | str, name: str) -> None:
        """Set the permission preset; ``ValueError`` for an unknown name."""
        if name not in PermissionPreset.values:
            raise ValueError(f"unknown permission preset {name!r}")
        _save(_fresh(session), permission_preset=name)

    def approval_override(self, session: Session | str) -> str | None:
        """Return the approval policy the session's custom preset sets, or None."""
        return _fresh(session).approval_policy or None

    def set_policy(self, session: Session | str, policy: str) -> None:
        """Set the session's approval policy."""
        _save(_fresh(session), approval_policy=policy)


class PlanMode:
    """Plan mode of a session's agent."""

    def get(self, session: Session | str) -> bool:
        """Return whether plan mode is active."""
        return bool(_fresh(session).plan_mode)

    def set(self, session: Session | str, active: bool) -> None:
        """Turn plan mode on or off."""
        _save(_fresh(session), plan_mode=active)


class Compaction:
    """The host's compaction (``/compact`` and automatic near the window)."""

    def compact(self, session: Session | str, *, trigger: str) -> None:
        """Compact the session's older turns in place (``CompactionRefused`` when nothing is
        left to compact)."""
        compaction.compact(_fresh(session), trigger=trigger)

    def compact_if_due(self, session: Session | str, capacity: int) -> bool:
        """Compact near the window (``capacity`` tokens) when no handoff applies."""
        fresh = _fresh(session)
        return compaction.maybe_auto_compact(fresh, capacity, handoff_will_run=False) is not None


class UsageProjection:
    """The usage projection (seed 003 §5.1, source 1)."""

    def buckets_total(self, session: Session | str) -> int:
        """Return the four buckets summed (tokens)."""
        return session_usage(_session(session)).total

    def context_tokens(self, session: Session | str) -> int:
        """Return the latest call's prompt size (tokens), 0 when a compaction came after it."""
        return context_tokens(_session(session))


class TokenMeter:
    """The heuristic meter (seed 003 §5.1, source 2)."""

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
