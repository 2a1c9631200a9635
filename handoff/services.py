"""The host services the handoff app reaches the host through (seed 003 §6.3–6.4; issue 4).

The handoff app never imports the host. Each service is a small protocol below; an integrator
points ``settings.HANDOFF_SERVICES[name]`` at a zero-argument factory (dotted path) or sets it to
``None`` to leave the service out, and ``host.services`` is the reference implementation.

``get(name)`` resolves the service **at each call**, never at start-up (seed 003 §6.4): a
factory registered at run time with ``register()`` is checked first, then the setting, so a
service that appears after start-up is picked up by the next attempt. Plan mode and compaction
are resolved per agent first (``agent_presets.service_for(session, name)``), then host-wide
(``for_agent``).

Session objects cross the boundary as the host's session instances (attributes read here: id,
owner_id, title, cwd, workspace_id, agent_preset, model, permission_preset, approval_policy,
sandbox_tier, plan_mode, request_config, parent_id, status, blank, archived, revision, turns,
compactions, context_window) or as plain ids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from handoff.settings_store import ProcessSettingsStore, SettingsStore, SettingsValues

SESSION_CONTROLLER = "session_controller"
WORKSPACE_REGISTRY = "workspace_registry"
AGENT_PRESETS = "agent_presets"
MODEL_SELECTION = "model_selection"
PERMISSION_PRESETS = "permission_presets"
PLAN_MODE = "plan_mode"
COMPACTION = "compaction"
USAGE_PROJECTION = "usage_projection"
TOKEN_METER = "token_meter"
SETTINGS_STORE = "settings_store"
STATUS_CHANNEL = "status_channel"
LLM = "llm"

SERVICE_NAMES = (
    SESSION_CONTROLLER,
    WORKSPACE_REGISTRY,
    AGENT_PRESETS,
    MODEL_SELECTION,
    PERMISSION_PRESETS,
    PLAN_MODE,
    COMPACTION,
    USAGE_PROJECTION,
    TOKEN_METER,
    SETTINGS_STORE,
    STATUS_CHANNEL,
    LLM,
)
# Resolved per agent first, then host-wide (seed 003 §6.4).
PER_AGENT = frozenset({PLAN_MODE, COMPACTION})


class SessionController(Protocol):
    """Reads and writes sessions (seed 003 §6.1 ``sessionController``)."""

    def get(self, session_id: str) -> Any | None:
        """Return the session read fresh from storage, or ``None`` when it does not exist."""

    def create(self, *, owner_id: Any, cwd: str, title: str, agent_preset: str | None) -> Any:
        """Create an idle, blank session by cwd (never with a workspace id; seed 003 §6.5)."""

    def in_flight(self, session: Any) -> list[str]:
        """Return the kinds of activity in flight (turn, compaction, job)."""

    def live_subagents(self, session: Any) -> list[str]:
        """Return the ids of the main's subagents that are still live."""

    def team_size(self, session: Any) -> int:
        """Return the member count of the team the session leads (0 when none)."""

    def pending_inbox(self, session: Any) -> int:
        """Return how many queued inbox items have not been taken yet."""

    def effective_context(self, session: Any) -> list[dict[str, str]]:
        """Return the context after the last compaction, oldest first, as ``{"role",
        "source_kind", "content", "tool_name"}``; the last compaction's summary comes first
        with source_kind ``compaction``."""

    def seed(self, session: Any, content: str) -> int:
        """Append ``content`` as a plugin message; return its sequence number."""

    def flush(self, session: Any, seq: int) -> None:
        """Raise unless the entry ``seq`` of the session's log is durably stored."""

    def rename(self, session: Any, title: str) -> None:
        """Set the session's title."""

    def append_notice(self, session: Any, content: str) -> None:
        """Append a system notice to the session's log (logs are append-only)."""

    def select_model(self, session: Any, model: str) -> None:
        """Select ``model`` for the session (logged as a model selection)."""

    def is_unwoken_draft(self, session: Any) -> bool:
        """Return whether the session is idle, blank, not archived and was never woken."""

    def archive(self, session: Any) -> None:
        """Archive the session (nothing is deleted)."""

    def start(self, session: Any) -> None:
        """Start the session's agent on its log (the runtime's ``start_agent``)."""

    def relay(self, session: Any, *, role: str, content: str, relay_id: str) -> bool:
        """Append a relay message and start a turn on it; ``False`` when ``relay_id`` is
        already in the session's log (nothing added)."""

    def step_rejected(self, forwarded_to: str, relay_id: str) -> Any:
        """Return the host's ``before_step`` answer meaning "forwarded"."""


class WorkspaceRegistry(Protocol):
    """Workspaces by path (seed 003 §6.1, §6.5)."""

    def resolve_by_path(self, owner_id: Any, path: str) -> Any | None:
        """Return the owner's workspace registered at ``path`` or ``None`` (never creates one)."""

    def attach(self, workspace: Any, session: Any) -> None:
        """Put ``session`` into ``workspace`` (its sidebar group)."""


class AgentPresets(Protocol):
    """Agent presets and their per-agent service realms (seed 003 §6.1, §6.4)."""

    def exists(self, name: str) -> bool:
        """Return whether a preset called ``name`` exists."""

    def composed_preset(self) -> str:
        """Return the preset composed for this deployment (the fallback)."""

    def options(self, name: str) -> Mapping[str, Any]:
        """Return the preset's options (``{"model": ...}`` among them)."""

    def service_for(self, session: Any, name: str) -> Any | None:
        """Return the instance of service ``name`` inside the session's agent realm, if any."""


class ModelSelection(Protocol):
    """Model selection read from the log, and the default model (seed 003 §6.1)."""

    def latest(self, session: Any) -> str | None:
        """Return the model of the latest model-selection entry in the log, or ``None``."""

    def default(self) -> str:
        """Return the deployment's current default model."""


class PermissionPresets(Protocol):
    """Permission presets and approval (seed 003 §6.1)."""

    def current(self, session: Any) -> str:
        """Return the session's permission preset name."""

    def set(self, session: Any, name: str) -> None:
        """Set the session's permission preset."""

    def approval_override(self, session: Any) -> str | None:
        """Return the approval policy a custom preset overrides, or ``None``."""

    def set_policy(self, session: Any, policy: str) -> None:
        """Set the session's approval policy."""


class PlanMode(Protocol):
    """Plan mode of one agent (seed 003 §6.1, §6.4)."""

    def get(self, session: Any) -> bool:
        """Return whether plan mode is active for the session's agent."""

    def set(self, session: Any, active: bool) -> None:
        """Turn plan mode on or off for the session's agent."""


class Compaction(Protocol):
    """The host's compaction (seed 000: the fallback that stays installed)."""

    def compact(self, session: Any, *, trigger: str) -> None:
        """Compact the session's older turns in place (``trigger``: manual or auto)."""

    def compact_if_due(self, session: Any, capacity: int) -> bool:
        """Compact automatically when the session is near ``capacity`` (tokens); return
        whether it compacted. Called only when no handoff applies."""


class UsageProjection(Protocol):
    """The tokenUsage projection (seed 003 §5.1, source 1)."""

    def buckets_total(self, session: Any) -> int:
        """Return the four buckets summed over the whole log (tokens)."""

    def context_tokens(self, session: Any) -> int:
        """Return the prompt size of the latest call with usage (tokens; 0 when none)."""


class TokenMeter(Protocol):
    """The heuristic meter (seed 003 §5.1, source 2)."""

    def measure(self, session: Any) -> int:
        """Return the estimated effective context (tokens)."""


class StatusChannel(Protocol):
    """The live channel the settings card and follower use (seed 003 §6.3 ``webServer``)."""

    def available(self) -> bool:
        """Return whether the channel layer is reachable."""


class LanguageModel(Protocol):
    """The model the summary is asked of (seed 000, Brief schema; DESIGN.md, LLM)."""

    @property
    def offline(self) -> bool:
        """``True`` when this is the embedded offline model (the offline summarizer is used)."""

    def window(self) -> int:
        """Return the summary model's context window in tokens (0 when unknown)."""

    def complete(
        self, *, system: str, prompt: str, max_tokens: int, timeout: float, purpose: str
    ) -> str:
        """Make one call without tools and return its text (JSON asked for)."""


_registered: dict[str, Callable[[], Any] | None] = {}


def register(name: str, factory: Callable[[], Any] | None) -> None:
    """Provide service ``name`` from ``factory`` (``None``: leave it out) from now on.

    Checked before ``settings.HANDOFF_SERVICES`` at every look-up, so the next attempt sees it.
    Raises ``KeyError`` for an unknown service name.
    """
    _check_name(name)
    _registered[name] = factory


def unregister(name: str) -> None:
    """Forget a run-time registration; the setting applies again."""
    _check_name(name)
    _registered.pop(name, None)


def _check_name(name: str) -> None:
    if name not in SERVICE_NAMES:
        raise KeyError(f"unknown host service {name!r}; known: {', '.join(SERVICE_NAMES)}")


def get(name: str) -> Any | None:
    """Return a fresh instance of service ``name``, or ``None`` when it is left out.

    Resolved now: the run-time registry first, then ``settings.HANDOFF_SERVICES[name]`` (a
    dotted path to a zero-argument factory, or a callable). Raises ``KeyError`` for an unknown
    name and ``ImportError`` for a path that does not import.
    """
    _check_name(name)
    if name in _registered:
        factory = _registered[name]
    else:
        configured = getattr(settings, "HANDOFF_SERVICES", {}).get(name)
        factory = import_string(configured) if isinstance(configured, str) else configured
    return factory() if factory is not None else None


def for_agent(session: Any, name: str) -> Any | None:
    """Resolve ``name`` for the session's agent: its preset realm first, then host-wide.

    Only plan mode and compaction live in agent realms (seed 003 §6.4); other names resolve
    host-wide. Returns ``None`` when neither side provides the service.
    """
    if name in PER_AGENT:
        presets = get(AGENT_PRESETS)
        if presets is not None:
            own = presets.service_for(session, name)
            if own is not None:
                return own
    return get(name)


def settings_store() -> SettingsStore:
    """Return the settings store, or the process-local one when it is left out (§6.3)."""
    store = get(SETTINGS_STORE)
    return store if store is not None else ProcessSettingsStore()


def load_settings() -> SettingsValues:
    """Read the settings afresh from the store (re-read at every step, invariant 2)."""
    return settings_store().load()
