"""The configuration inheritance matrix (docs/spec.md, Inheritance).

The successor is created by cwd with the source's agent preset (``create_successor``); then
every other row is applied to it (``apply``). Each row is reported as ``{"setting", "outcome",
"detail"}`` with outcome ``inherited``, ``fallback`` or ``not-inherited``; a row that fails is
reported as not inherited with the error, never swallowed, and never fails the handoff.

Rows: cwd; workspace (resolved by path and attached after creation; an unknown directory is
never registered); agent-preset (composed-preset fallback); model (four-step chain: latest model
selection in the source's log → the request config → the agent's options → the default model);
permission-preset; under a custom preset approval-policy (inherited) and sandbox-tier (not
inherited, §6.2); plan-mode (resolved per agent on each side, §6.4); log (§6.2: the successor
starts from the brief only).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from django.db import transaction
from django.utils.functional import Promise
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from handoff import degradation, services
from handoff.degradation import Degradation
from handoff.services import HostSession, PermissionPresets, SessionController

logger = logging.getLogger(__name__)

INHERITED = "inherited"
FALLBACK = "fallback"
NOT_INHERITED = "not-inherited"
CUSTOM = "custom"

Row = dict[str, str]

# What people read for a row (docs/spec.md, Inheritance: 已继承 / 回退 / 未继承（原因）); the
# identifiers above stay in the API and the command's JSON.
OUTCOME_LABELS: dict[str, Promise] = {
    INHERITED: _("inherited"),
    FALLBACK: _("fallback"),
    NOT_INHERITED: _("not inherited"),
}
SETTING_LABELS: dict[str, Promise] = {
    "cwd": _("Working directory"),
    "workspace": _("Workspace"),
    "agent-preset": _("Agent preset"),
    "model": _("Model"),
    "permission-preset": _("Permission preset"),
    "approval-policy": _("Approval policy"),
    "sandbox-tier": _("Sandbox tier"),
    "plan-mode": _("Plan mode"),
    "log": _("Log"),
}


# The details that carry values (a path, a name, an error), as ``row`` is given them: stored
# filled in, in English; ``readable`` recognises them and says them in the active language.
PRESET_MISSING = gettext_noop(
    "preset “%(preset)s” does not exist; composed preset “%(composed)s” used"
)
NOT_A_WORKSPACE = gettext_noop("%(cwd)s is not a registered workspace (not created)")
MODEL_FROM_LOG = gettext_noop("%(model)s (latest model selection in the source's log)")
MODEL_FROM_CONFIG = gettext_noop("%(model)s (the source's request config)")
MODEL_FROM_PRESET = gettext_noop("%(model)s (the options of agent preset “%(preset)s”)")
MODEL_DEFAULT = gettext_noop("%(model)s (the default model)")
FAILED = gettext_noop("failed: %(error)s")
_PLACEHOLDER = re.compile(r"%\\\(([a-z]+)\\\)s")


def _pattern(template: str) -> re.Pattern[str]:
    """A pattern matching ``template`` filled in, each value a named group."""
    return re.compile(_PLACEHOLDER.sub(r"(?P<\1>.+)", re.escape(template)), re.DOTALL)


TEMPLATES = [
    (template, _pattern(template))
    for template in (
        PRESET_MISSING,
        NOT_A_WORKSPACE,
        MODEL_FROM_LOG,
        MODEL_FROM_CONFIG,
        MODEL_FROM_PRESET,
        MODEL_DEFAULT,
        FAILED,
    )
]


def row(setting: str, outcome: str, detail: str, **values: str) -> Row:
    """Return one report row; ``detail`` is filled in with ``values`` when given (one of the
    templates above, ``%(name)s`` placeholders)."""
    return {"setting": setting, "outcome": outcome, "detail": detail % values if values else detail}


def readable(report: list[Row]) -> list[dict[str, object]]:
    """Return the report's rows as people read them: ``setting`` and ``outcome`` in words (an
    unknown identifier as it is), ``detail`` in the active language when it is one of this
    module's sentences, those carrying values too (``prose`` True; safe HTML, each value marked
    ``translate="no"``), else as stored (a path, a name: ``prose`` False),
    ``code`` the outcome's identifier. The stored rows and the API keep the English."""
    return [
        {
            "setting": SETTING_LABELS.get(r["setting"], r["setting"]),
            "outcome": OUTCOME_LABELS.get(r["outcome"], r["outcome"]),
            "code": r["outcome"],
            **_detail(r.get("detail", "")),
        }
        for r in report
    ]


def _filled(stored: str) -> tuple[str, dict[str, str]] | None:
    """The template ``stored`` was filled in from and its values; None for any other detail."""
    for template, pattern in TEMPLATES:
        found = pattern.fullmatch(stored)
        if found:
            return template, found.groupdict()
    return None


def _detail(stored: str) -> dict[str, object]:
    """A stored detail in the active language: a fixed sentence translated, a sentence with
    values translated around them (each value marked ``translate="no"``: a path, a name, an
    error), anything else as stored (``prose`` False)."""
    filled = _filled(stored)
    if filled is not None:
        template, values = filled
        marked = {
            name: format_html('<span translate="no">{}</span>', value)
            for name, value in values.items()
        }
        sentence: SafeString = mark_safe(escape(gettext(template)) % marked)
        return {"detail": sentence, "prose": True}
    translated = gettext(stored) if stored else stored
    return {"detail": translated, "prose": translated != stored}


def detail_text(stored: str) -> str:
    """A stored detail as plain text in the active language (a terminal's ``_detail``)."""
    filled = _filled(stored)
    if filled is not None:
        return gettext(filled[0]) % filled[1]
    return gettext(stored) if stored else stored


def _missing(degraded: Degradation, detail: str = "") -> Row:
    """The row a missing service marks not inherited (``handoff.degradation``; ``detail``:
    instead of the table's)."""
    return row(degraded.setting, NOT_INHERITED, detail or degraded.detail)


def _agent_preset(source: HostSession) -> tuple[str | None, Row]:
    """Choose the successor's agent preset: the source's, else the composed preset."""
    presets = services.agent_presets()
    if presets is None:
        return None, _missing(degradation.AGENT_PRESETS)
    if presets.exists(source.agent_preset):
        return source.agent_preset, row("agent-preset", INHERITED, source.agent_preset)
    composed = presets.composed_preset()
    return composed, row(
        "agent-preset",
        FALLBACK,
        PRESET_MISSING,
        preset=source.agent_preset,
        composed=str(composed),
    )


def create_successor(
    controller: SessionController, source: HostSession
) -> tuple[HostSession, list[Row]]:
    """Create the successor draft by cwd (no workspace id), in the source's runtime (a
    terminal session's successor is a session of that runtime), and return it with its first
    rows.

    Raises whatever the session controller raises: no successor exists then.
    """
    preset, preset_row = _agent_preset(source)
    successor = controller.create(
        owner_id=source.owner_id,
        cwd=source.cwd,
        title=source.title,
        agent_preset=preset,
        runtime=source.runtime,
    )
    cwd_row = (
        row("cwd", INHERITED, source.cwd)
        if source.cwd
        else row("cwd", NOT_INHERITED, gettext_noop("the source has no working directory"))
    )
    return successor, [cwd_row, preset_row]


def _workspace(source: HostSession, successor: HostSession) -> Row:
    registry = services.workspace_registry()
    if registry is None:
        return _missing(degradation.WORKSPACE_REGISTRY)
    if not source.cwd:
        return row("workspace", NOT_INHERITED, gettext_noop("the source has no working directory"))
    workspace = registry.resolve_by_path(source.owner_id, source.cwd)
    if workspace is None:
        return row("workspace", NOT_INHERITED, NOT_A_WORKSPACE, cwd=source.cwd)
    registry.attach(workspace, successor)
    return row("workspace", INHERITED, source.cwd)


def choose_model(source: HostSession, successor: HostSession) -> tuple[str | None, str, str]:
    """Return ``(model, outcome, detail)`` by the four-step chain (docs/spec.md, Inheritance);
    ``detail`` says where it came from: one of the ``MODEL_*`` templates (``%(model)s``,
    ``%(preset)s``: the successor's agent preset) or, without a model, a fixed sentence.

    ``model`` is ``None`` when the chain ends at the default model and the host provides no
    model selection service to name it: the successor keeps the host's default then.
    """
    selection = services.model_selection()
    latest = selection.latest(source) if selection is not None else None
    if latest:
        return latest, INHERITED, MODEL_FROM_LOG
    configured = (source.request_config or {}).get("model")
    if configured:
        return str(configured), INHERITED, MODEL_FROM_CONFIG
    presets = services.agent_presets()
    option = presets.options(successor.agent_preset).get("model") if presets else None
    if option:
        return str(option), FALLBACK, MODEL_FROM_PRESET
    if selection is None:
        return None, FALLBACK, gettext_noop("no model selection service: the host's default model")
    return selection.default(), FALLBACK, MODEL_DEFAULT


def _model(controller: SessionController, source: HostSession, successor: HostSession) -> Row:
    model, outcome, detail = choose_model(source, successor)
    if model is None:
        return row("model", outcome, detail)
    controller.select_model(successor, model)
    return row("model", outcome, detail, model=model, preset=str(successor.agent_preset))


def _permissions(source: HostSession, successor: HostSession) -> list[Row]:
    permissions = services.permission_presets()
    if permissions is None:
        return [_missing(degradation.PERMISSION_PRESETS)]
    name = permissions.current(source)
    permissions.set(successor, name)
    rows = [row("permission-preset", INHERITED, name)]
    if name == CUSTOM:
        rows += _guarded("approval-policy", lambda: [_approval(permissions, source, successor)])
        rows.append(
            row(
                "sandbox-tier",
                NOT_INHERITED,
                gettext_noop("sandbox tier not inherited: a custom preset has no name to replay"),
            )
        )
    return rows


def _approval(permissions: PermissionPresets, source: HostSession, successor: HostSession) -> Row:
    policy = permissions.approval_override(source)
    if not policy:
        return row(
            "approval-policy",
            NOT_INHERITED,
            gettext_noop("the source overrides no approval policy"),
        )
    permissions.set_policy(successor, policy)
    return row("approval-policy", INHERITED, policy)


def _plan_mode(source: HostSession, successor: HostSession) -> Row:
    own = services.plan_mode_for(source)
    theirs = services.plan_mode_for(successor)
    if own is None:
        return _missing(degradation.PLAN_MODE)
    if theirs is None:
        return _missing(degradation.PLAN_MODE, degradation.PLAN_MODE_SUCCESSOR_DETAIL)
    active = bool(own.get(source))
    theirs.set(successor, active)
    return row("plan-mode", INHERITED, gettext_noop("on") if active else gettext_noop("off"))


def _guarded(setting: str, apply_rows: Callable[[], list[Row]]) -> list[Row]:
    """Apply rows in a savepoint; a failure is rolled back alone and becomes a not-inherited row
    naming the error (and is logged)."""
    try:
        with transaction.atomic():
            return apply_rows()
    except Exception as exc:
        logger.exception("inheriting %s failed", setting)
        return [row(setting, NOT_INHERITED, FAILED, error=f"{type(exc).__name__}: {exc}")]


def apply(controller: SessionController, source: HostSession, successor: HostSession) -> list[Row]:
    """Apply the rows after creation to ``successor`` and return their report rows.

    Never raises for a row: each failure is its own not-inherited row. The successor's log
    gains no message here (the brief stays its first message).
    """
    return [
        *_guarded("workspace", lambda: [_workspace(source, successor)]),
        *_guarded("model", lambda: [_model(controller, source, successor)]),
        *_guarded("permission-preset", lambda: _permissions(source, successor)),
        *_guarded("plan-mode", lambda: [_plan_mode(source, successor)]),
        row("log", NOT_INHERITED, gettext_noop("the successor starts from the brief only")),
    ]
