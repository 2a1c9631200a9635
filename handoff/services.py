"""The host services the handoff app reaches the host through (docs/spec.md, Degradation).

The handoff app never imports the host. Each service is a small protocol below; an integrator
points ``settings.HANDOFF_SERVICES[name]`` at a zero-argument factory (dotted path) or sets it to
``None`` to leave the service out, and ``host.services`` is the reference implementation. The
setting has no default (the handoff names no host): a service it does not name is left out, and
the handoff degrades as docs/spec.md, Degradation says (without a session controller it is
unavailable: the system check ``handoff.W001`` says so at start-up).

Each service is resolved **at each call**, never at start-up (docs/spec.md, Degradation): a factory
registered at run time with ``register()`` is checked first, then the setting, so a service
that appears after start-up is picked up by the next attempt. The typed accessors
(``session_controller()``, ``llm()`` …) return the service as its protocol, or ``None`` when it
is left out; ``plan_mode_for`` and ``compaction_for`` resolve per agent first
(``agent_presets.service_for(session, name)``), then host-wide.

Sessions cross the boundary as ``HostSession``: whatever object the host's controller returns,
read through the attributes that protocol names (a Django model instance fits), or as plain ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, cast, runtime_checkable

from django.core.exceptions import ImproperlyConfigured
from django.db.models import OuterRef, QuerySet
from django.utils.module_loading import import_string

from handoff import degradation
from handoff.conf import handoff_settings
from handoff.session_model import SessionId
from handoff.settings_store import SettingsStore, SettingsValues

SESSION_CONTROLLER = "session_controller"
PRODUCT_RUNTIME = "product"
"""``HostSession.runtime`` of a session that runs in this product (any other: in a terminal)."""
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
# Resolved per agent first, then host-wide (docs/spec.md, Degradation).
PER_AGENT = frozenset({PLAN_MODE, COMPACTION})


class HostSession(Protocol):
    """A host's session as the handoff reads it (docs/design.md, Layers).

    ``status`` is ``idle``, ``running``, ``disposed`` …; ``revision`` the log's sequence number;
    ``context_window`` the window the transcript stated (tokens; 0 or ``None`` when unknown);
    ``runtime`` where it runs: ``PRODUCT_RUNTIME`` (here), else another runtime's name
    (``claude``, ``codex``: a followed log, whose handoff the guard refuses unless that
    runtime runs the product's hooks: ``SessionObservation.hooked``).
    The model the handoff's tables point at is ``settings.HANDOFF_SESSION_MODEL``
    (``handoff.session_model`` says what it must have besides).
    """

    @property
    def pk(self) -> Any: ...
    @property
    def owner_id(self) -> Any: ...
    @property
    def parent_id(self) -> Any: ...
    @property
    def title(self) -> str: ...
    @property
    def cwd(self) -> str: ...
    @property
    def agent_preset(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def permission_preset(self) -> str: ...
    @property
    def request_config(self) -> Mapping[str, Any] | None: ...
    @property
    def status(self) -> str: ...
    @property
    def archived(self) -> bool: ...
    @property
    def revision(self) -> int: ...
    @property
    def turns(self) -> int: ...
    @property
    def compactions(self) -> int: ...
    @property
    def context_window(self) -> int | None: ...
    @property
    def runtime(self) -> str: ...


# A session as the services take it: the host's object or its id.
SessionRef: TypeAlias = "HostSession | SessionId"


class SessionObservation(Protocol):
    """A session read now with the facts the blockers and ``stable()`` look at (docs/spec.md,
    Deferral; Stability)."""

    @property
    def session(self) -> HostSession:
        """The session row."""

    @property
    def activities(self) -> Sequence[str]:
        """The kinds of activity in flight (turn, compaction, job), sorted, distinct."""

    @property
    def live_subagents(self) -> Sequence[str]:
        """The ids of the main's subagents that are still live."""

    @property
    def team_members(self) -> int:
        """The member count of the team the session leads (0 when none)."""

    @property
    def pending_inbox(self) -> int:
        """How many queued inbox items have not been taken yet."""

    @property
    def hooked(self) -> bool:
        """Whether the session's runtime runs the product's hooks for it (a Claude Code or
        Codex session): its successor can then be opened in that runtime."""


class SessionController(Protocol):
    """Reads and writes sessions (docs/spec.md, Degradation: session controller)."""

    def get(self, session_id: str) -> HostSession | None:
        """Return the session read fresh from storage, or ``None`` when it does not exist."""

    def ids_starting_with(self, prefix: str, *, limit: int) -> list[str]:
        """Return the ids (as text) of at most ``limit`` sessions whose id starts with
        ``prefix`` (hex digits and dashes, as ids are written; asked only of a host whose
        session model has UUID keys: ``manage.py handoff`` takes other ids whole)."""

    def owned_by(self, owner_id: Any) -> Iterable[Any]:
        """Return the primary keys of the sessions user ``owner_id`` owns: the ownership the
        handoff's lists filter by with ``__in`` (a ``values_list("pk", flat=True)`` queryset
        keeps that one query)."""

    def observe(self, session_id: str) -> SessionObservation | None:
        """Return the session and its blocker facts read now (in as few queries as the host
        can: one on the reference host while nothing is in flight), or ``None``."""

    def create(
        self,
        *,
        owner_id: Any,
        cwd: str,
        title: str,
        agent_preset: str | None,
        runtime: str = PRODUCT_RUNTIME,
    ) -> HostSession:
        """Create an idle, blank session by cwd, never with a workspace id (docs/spec.md,
        Inheritance).

        ``runtime``: where it will run; another runtime's draft is filled by that runtime's
        next session (its hooks or the marker claim it), never started here."""

    def effective_context(self, session: SessionRef, *, after: int = 0) -> list[dict[str, Any]]:
        """Return the context after the last compaction, oldest first, as ``{"role",
        "source_kind", "content", "tool_name", "seq"}`` (``seq``: the entry's sequence number,
        which the brief cites as evidence), the log read in one query; the last
        compaction's summary comes first with source_kind ``compaction``, preceded by the
        file-writing tool calls it compacted and their results, each marked ``"compacted":
        True`` (the files edited before it, which the summary may not name). All of it: the brief
        reads the whole structure (first request, every edit, the latest todo list), and the
        summary call fits it to its window with a notice. With ``after`` (a ``seq``
        of the context), only the messages after it: what the kept digest has not read yet."""

    def seed(self, session: SessionRef, content: str) -> int:
        """Append ``content`` as a plugin message; return its sequence number."""

    def flush(self, session: SessionRef, seq: int) -> None:
        """Raise unless the entry ``seq`` of the session's log is durably stored and, for a
        session another runtime runs, there is evidence that runtime received it."""

    def rename(self, session: SessionRef, title: str) -> None:
        """Set the session's title."""

    def append_notice(self, session: SessionRef, content: str) -> None:
        """Append a system notice to the session's log (logs are append-only)."""

    def select_model(self, session: SessionRef, model: str) -> None:
        """Select ``model`` for the session (logged as a model selection)."""

    def is_unwoken_draft(self, session: SessionRef) -> bool:
        """Return whether the session is idle, blank, not archived and was never woken."""

    def archive(self, session: SessionRef) -> None:
        """Archive the session (nothing is deleted)."""

    def start(self, session: SessionRef) -> bool:
        """Start the session's agent on its log (the runtime's ``start_agent``); return True.
        Return False for a session its own runtime starts (a terminal): ``started`` is recorded
        when its first turn shows in its log."""

    def relay(self, session: SessionRef, *, role: str, content: str, relay_id: str) -> bool:
        """Append a relay message and start a turn on it; ``False`` when ``relay_id`` is
        already in the session's log (nothing added)."""

    def step_rejected(self, forwarded_to: str, relay_id: str) -> Any:
        """Return the host's ``before_step`` answer meaning "forwarded"."""


@runtime_checkable
class ObservedRows(Protocol):
    """A session controller that can also say what ``observe`` reads as SQL, so a write can
    re-check ``stable()`` in its own statement (docs/spec.md, Stability). Optional: without it
    each such check is one ``observe`` before the write."""

    def observed_rows(self, session_id: str | OuterRef) -> QuerySet[Any, Any]:
        """Return the session's row (a queryset of at most one; none for an unknown id) with
        the counts ``observe`` reads annotated: ``open_activities``, ``live_subagent_count``,
        ``team_members`` and ``pending_inbox_count``; a filter on them and on the session's
        ``status``, ``revision``, ``archived`` and ``permission_preset`` says what the matching
        ``SessionObservation`` would. ``session_id`` may be an ``OuterRef`` to a column of the
        query this one is a subquery of (the session that query's row names), so the
        condition names no one session and can be built once."""


class WorkspaceRegistry(Protocol):
    """Workspaces by path (docs/spec.md, Inheritance: ``workspace``)."""

    def resolve_by_path(self, owner_id: Any, path: str) -> Any | None:
        """Return the owner's workspace registered at ``path`` or ``None`` (never creates one)."""

    def attach(self, workspace: Any, session: SessionRef) -> None:
        """Put ``session`` into ``workspace`` (its sidebar group)."""


class AgentPresets(Protocol):
    """Agent presets and their per-agent service realms (docs/spec.md, Inheritance; Degradation)."""

    def exists(self, name: str) -> bool:
        """Return whether a preset called ``name`` exists."""

    def composed_preset(self) -> str:
        """Return the preset composed for this deployment (the fallback)."""

    def options(self, name: str) -> Mapping[str, Any]:
        """Return the preset's options (``{"model": ...}`` among them)."""

    def service_for(self, session: SessionRef, name: str) -> object | None:
        """Return the instance of service ``name`` inside the session's agent realm, if any."""


class ModelSelection(Protocol):
    """Models: the selection in the log, the default, the windows (docs/spec.md, Inheritance)."""

    def latest(self, session: SessionRef) -> str | None:
        """Return the model of the latest model-selection entry in the log, or ``None``."""

    def default(self) -> str:
        """Return the deployment's current default model."""

    def window(self, model: str) -> int:
        """Return ``model``'s context window in tokens from the host's table (0 when unknown)."""


class PermissionPresets(Protocol):
    """Permission presets and approval (docs/spec.md, Inheritance)."""

    def current(self, session: SessionRef) -> str:
        """Return the session's permission preset name."""

    def set(self, session: SessionRef, name: str) -> None:
        """Set the session's permission preset."""

    def approval_override(self, session: SessionRef) -> str | None:
        """Return the approval policy a custom preset overrides, or ``None``."""

    def set_policy(self, session: SessionRef, policy: str) -> None:
        """Set the session's approval policy."""


class PlanMode(Protocol):
    """Plan mode of one agent (docs/spec.md, Inheritance; Degradation)."""

    def get(self, session: SessionRef) -> bool:
        """Return whether plan mode is active for the session's agent."""

    def set(self, session: SessionRef, active: bool) -> None:
        """Turn plan mode on or off for the session's agent."""


class Compaction(Protocol):
    """The host's compaction (docs/spec.md, Compaction: the fallback that stays installed)."""

    def compact(self, session: SessionRef, *, trigger: str) -> None:
        """Compact the session's older turns in place (``trigger``: manual or auto)."""

    def compact_if_due(self, session: SessionRef, capacity: int) -> bool:
        """Compact automatically when the session is near ``capacity`` (tokens); return
        whether it compacted. Called only when no handoff applies."""


class UsageProjection(Protocol):
    """The usage projection (docs/spec.md, Token sources, source 1)."""

    def buckets_total(self, session: SessionRef) -> int:
        """Return the four buckets summed over the whole log (tokens)."""

    def context_tokens(self, session: SessionRef) -> int:
        """Return the prompt size of the latest call with usage (tokens; 0 when none)."""


class TokenMeter(Protocol):
    """The heuristic meter (docs/spec.md, Token sources, source 2)."""

    def measure(self, session: SessionRef) -> int:
        """Return the estimated effective context (tokens)."""


class StatusChannel(Protocol):
    """The live channel of the settings card and follower (docs/spec.md, Degradation)."""

    def available(self) -> bool:
        """Return whether the channel layer is reachable."""


class LanguageModel(Protocol):
    """The model the summary is asked of (docs/spec.md, Brief)."""

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


def get(name: str) -> object | None:
    """Return a fresh instance of service ``name``, or ``None`` when it is left out.

    Resolved now: the run-time registry first, then ``settings.HANDOFF_SERVICES[name]`` (a
    dotted path to a zero-argument factory, or a callable). Raises ``KeyError`` for an unknown
    name and ``ImproperlyConfigured`` (naming the setting) for a path that does not import (the
    system check ``handoff.E002`` says so at start-up). The typed accessors below are what the
    handoff app calls.
    """
    _check_name(name)
    if name in _registered:
        factory = _registered[name]
    else:
        configured = handoff_settings().services.get(name)
        factory = _imported(name, configured) if isinstance(configured, str) else configured
    return factory() if factory is not None else None


def _imported(name: str, path: str) -> Callable[[], Any]:
    try:
        factory: Callable[[], Any] = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(
            f"HANDOFF_SERVICES[{name!r}] = {path!r} does not import: {exc}"
        ) from exc
    return factory


def for_agent(session: HostSession, name: str) -> object | None:
    """Resolve ``name`` for the session's agent: its preset realm first, then host-wide.

    Only plan mode and compaction live in agent realms (docs/spec.md, Degradation); other names
    resolve host-wide. Returns ``None`` when neither side provides the service.
    """
    if name in PER_AGENT:
        presets = agent_presets()
        if presets is not None:
            own = presets.service_for(session, name)
            if own is not None:
                return own
    return get(name)


def session_controller() -> SessionController | None:
    """The session controller, or ``None`` when left out (handoff is unavailable then)."""
    return cast("SessionController | None", get(SESSION_CONTROLLER))


def workspace_registry() -> WorkspaceRegistry | None:
    """The workspace registry, or ``None`` when left out."""
    return cast("WorkspaceRegistry | None", get(WORKSPACE_REGISTRY))


def agent_presets() -> AgentPresets | None:
    """The agent presets, or ``None`` when left out."""
    return cast("AgentPresets | None", get(AGENT_PRESETS))


def model_selection() -> ModelSelection | None:
    """The model selection (latest, default, windows), or ``None`` when left out."""
    return cast("ModelSelection | None", get(MODEL_SELECTION))


def permission_presets() -> PermissionPresets | None:
    """The permission presets, or ``None`` when left out."""
    return cast("PermissionPresets | None", get(PERMISSION_PRESETS))


def plan_mode_for(session: HostSession) -> PlanMode | None:
    """Plan mode of the session's agent (its realm first, then host-wide), or ``None``."""
    return cast("PlanMode | None", for_agent(session, PLAN_MODE))


def compaction_for(session: HostSession) -> Compaction | None:
    """Compaction of the session's agent (its realm first, then host-wide), or ``None``."""
    return cast("Compaction | None", for_agent(session, COMPACTION))


def usage_projection() -> UsageProjection | None:
    """The usage projection, or ``None`` when left out."""
    return cast("UsageProjection | None", get(USAGE_PROJECTION))


def token_meter() -> TokenMeter | None:
    """The token meter, or ``None`` when left out."""
    return cast("TokenMeter | None", get(TOKEN_METER))


def status_channel() -> StatusChannel | None:
    """The status channel, or ``None`` when left out."""
    return cast("StatusChannel | None", get(STATUS_CHANNEL))


def llm() -> LanguageModel | None:
    """The language model the summary is asked of, or ``None`` when left out."""
    return cast("LanguageModel | None", get(LLM))


def settings_store() -> SettingsStore:
    """Return the settings store, or the process-local one when it is left out
    (``handoff.degradation.SETTINGS``)."""
    return degradation.settings_store(cast("SettingsStore | None", get(SETTINGS_STORE)))


def load_settings() -> SettingsValues:
    """Read the settings afresh from the store (re-read at every step, invariant 2)."""
    return settings_store().load()
