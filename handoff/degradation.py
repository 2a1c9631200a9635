"""Degradation when a host service is missing: docs/spec.md, Degradation's ten rows, in one place.

``TABLE`` holds the rows in the seed's order, each a ``Degradation``: the seed's name for the
service (``key``), the ``settings.HANDOFF_SERVICES`` entries whose absence it covers
(``services``), the seed's consequence in English, the sentence the status report shows
(``notice``, marked for translation; empty when the row shows elsewhere) and, for the rows of
the inheritance matrix, the report row it marks not inherited (``setting``, ``detail``).

| row (seed)                      | services                          | where it shows             |
|---------------------------------|-----------------------------------|----------------------------|
| sessionController               | session_controller                | ``require`` raises; notice |
| llm                             | llm                               | ``require`` raises; notice |
| agentPresets                    | agent_presets                     | inheritance row            |
| workspaceRegistry               | workspace_registry                | inheritance row            |
| permissionPresets / approval    | permission_presets                | inheritance row            |
| planMode (neither side)         | plan_mode                         | inheritance row; notice    |
| tokenMeter / sessionProjections | token_meter, usage_projection     | label; refusal; notice     |
| settings                        | settings_store                    | ``settings_store``; notice |
| webServer                       | status_channel                    | notice                     |
| compaction (neither side)       | compaction                        | notice                     |

The engine applies a row where the service is resolved (``handoff.services``): it calls
``require`` for a service it cannot do without, reports a matrix row's ``setting`` not inherited
with its ``detail`` (``handoff.inheritance``), and calls ``settings_store`` for the settings
fallback and ``notices`` for the status report. This module
imports no service lookup (``handoff.services`` depends on it), so each row names its services as
``HANDOFF_SERVICES`` keys.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TypeVar

from django.utils.translation import gettext_noop

from handoff.exceptions import ServiceUnavailable
from handoff.settings_store import ProcessSettingsStore, SettingsStore

T = TypeVar("T")


@dataclass(frozen=True)
class Degradation:
    """One row of docs/spec.md, Degradation.

    ``key``: the seed's name of the service; ``services``: the ``HANDOFF_SERVICES`` names whose
    absence it covers (all of them missing, for tokens); ``consequence``: the seed's column in
    English; ``notice``: the status report's sentence (``""``: none); ``setting`` / ``detail``:
    the inheritance report row it marks ``not-inherited`` and why (``""``: none).
    """

    key: str
    services: tuple[str, ...]
    consequence: str
    notice: str = ""
    setting: str = ""
    detail: str = ""


SESSION_CONTROLLER = Degradation(
    "sessionController",
    ("session_controller",),
    "the handoff fails with a clear error; automatic handoff is off; nothing fails silently",
    notice=gettext_noop(
        "The host cannot reach its conversations: handoff is unavailable and automatic "
        "handoff is off."
    ),
)
LLM = Degradation(
    "llm",
    ("llm",),
    "no brief can be written: the handoff is abandoned and the source session kept",
    notice=gettext_noop(
        "No language model: a handoff cannot write its brief, so it fails and the "
        "conversation stays as it is."
    ),
)
AGENT_PRESETS = Degradation(
    "agentPresets",
    ("agent_presets",),
    "the preset row is marked not inherited; the deployment default is used",
    setting="agent-preset",
    detail=gettext_noop("no agent presets service: deployment default used"),
)
WORKSPACE_REGISTRY = Degradation(
    "workspaceRegistry",
    ("workspace_registry",),
    "the workspace row is marked not inherited; the successor is created in no group (§6.5)",
    setting="workspace",
    detail=gettext_noop("no workspace registry: the conversation is in no group"),
)
PERMISSION_PRESETS = Degradation(
    "permissionPresets",
    ("permission_presets",),
    "the permission row is marked not inherited",
    setting="permission-preset",
    detail=gettext_noop("no permission presets service"),
)
PLAN_MODE = Degradation(
    "planMode",
    ("plan_mode",),
    "the plan mode row is marked not inherited (when either side's agent has none)",
    notice=gettext_noop("This conversation's agent has no plan mode: it is not passed on."),
    setting="plan-mode",
    detail=gettext_noop("no plan mode service for the source's agent"),
)
# The plan mode row's detail when the source's agent has the service and the successor's not.
PLAN_MODE_SUCCESSOR_DETAIL = gettext_noop("no plan mode service for the successor's agent")
TOKEN_SOURCES = Degradation(
    "tokenMeter / sessionProjections",
    ("token_meter", "usage_projection"),
    "tokens are labelled unavailable and automatic handoff is off",
    notice=gettext_noop(
        "Token figures are unavailable: automatic handoff is off for this conversation; "
        "/handoff now still works."
    ),
)
SETTINGS = Degradation(
    "settings",
    ("settings_store",),
    "settings hold in this process only",
    notice=gettext_noop("No settings store: settings live in this process only."),
)
WEB_SERVER = Degradation(
    "webServer",
    ("status_channel",),
    "the settings card says the status channel is unavailable; the settings form still works",
    notice=gettext_noop(
        "Status channel unavailable: pages do not follow live; settings still save."
    ),
)
COMPACTION = Degradation(
    "compaction",
    ("compaction",),
    "automatic compaction is off, said plainly; a manual /handoff is not affected",
    notice=gettext_noop("Automatic compaction is off: this conversation's agent cannot compact."),
)

TABLE = (
    SESSION_CONTROLLER,
    LLM,
    AGENT_PRESETS,
    WORKSPACE_REGISTRY,
    PERMISSION_PRESETS,
    PLAN_MODE,
    TOKEN_SOURCES,
    SETTINGS,
    WEB_SERVER,
    COMPACTION,
)

# Why an attempt ends without a record when a row applies (``handoff.attempt``, steps 1 and 3).
NO_CONTROLLER_REFUSAL = (
    "the host provides no session controller: handoff is unavailable and automatic handoff is off"
)
TOKENS_UNAVAILABLE_REFUSAL = "token figures are unavailable: automatic handoff off"


def require(service: T | None, row: Degradation, consequence: str) -> T:
    """Return ``service``; raise ``ServiceUnavailable`` naming ``row``'s service and
    ``consequence`` (what the caller cannot do) when it is ``None`` (left out)."""
    if service is None:
        raise ServiceUnavailable(row.services[0], consequence)
    return service


def settings_store(found: SettingsStore | None) -> SettingsStore:
    """Return the settings store the host provides, or the one of this process (``SETTINGS``)
    when it is left out."""
    return found if found is not None else ProcessSettingsStore()


def notices(missing: Collection[Degradation]) -> list[str]:
    """Return the status report's sentences for the rows in ``missing``, in the table's order
    (rows without a notice say nothing)."""
    return [row.notice for row in TABLE if row in missing and row.notice]
