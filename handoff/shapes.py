"""The shapes the handoff shows on every surface, each declared once (docs/design.md, Layers).

``handoff.status`` returns them as plain dicts (``record_dict``, ``build``) for
``manage.py handoff --json``, the composer and the settings card; the JSON API
names the same classes in ``response=``, so its OpenAPI schema is built from these definitions
(pydantic reads ``TypedDict``s, ``Field`` descriptions included). A key added here is a key
every surface prints, documents and is type-checked against.

- ``TokensOut`` ``{"value", "basis", "label"}`` (docs/spec.md, Token sources; declared in
  ``handoff.core.tokens``, which must stay free of pydantic);
- ``MetricsOut`` ``{"tokens", "turns", "compactions", "capacity"}``;
- ``RecordOut`` one handoff record (docs/spec.md, State: ``records``);
- ``MeterOut`` the context meter (docs/design.md, The context meter; its figures declared in
  ``handoff.meter.rules``) with its sentence in the active language (``handoff.words.meter``);
- ``StatusOut`` the status report (docs/spec.md, State).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import Field

# pydantic reads only typing_extensions' TypedDict on Python 3.11.
from typing_extensions import TypedDict

from handoff.core.tokens import TokensOut
from handoff.meter.rules import MeterOut as MeterFigures

__all__ = [
    "BackoffOut",
    "ExportMainOut",
    "ExportOut",
    "ExportRecordOut",
    "MeterOut",
    "MetricsOut",
    "RecordOut",
    "StatusOut",
    "TokensOut",
]

ISO_8601 = "ISO 8601, as every surface prints it."


class MetricsOut(TypedDict):
    """The figures the attempt decided on: tokens, turns, compactions, capacity (tokens)."""

    tokens: int
    turns: int
    compactions: int
    capacity: int


class RecordOut(TypedDict):
    """One handoff attempt (docs/spec.md, State: ``records``); ids are strings."""

    id: str
    source: str
    target: str | None
    phase: str
    reason: str
    metrics: MetricsOut
    source_revision: int
    brief: dict[str, Any] | None
    original_brief: Annotated[
        dict[str, Any] | None,
        Field(description="The model's brief when a review edited it (brief is the edited one)."),
    ]
    review_until: Annotated[
        str | None,
        Field(description="While the record waits for review: until when (ISO 8601)."),
    ]
    error: str
    inheritance: list[dict[str, Any]]
    created: Annotated[str, Field(description=ISO_8601)]
    updated: Annotated[str, Field(description=ISO_8601)]


class BackoffOut(TypedDict):
    """Why and until when automatic handoff waits (docs/design.md, Backoff after failure)."""

    until: Annotated[str, Field(description=ISO_8601)]
    failures: Annotated[int, Field(description="Automatic attempts failed in a row.")]
    reason: Annotated[str, Field(description="The error of the last failed attempt.")]


class MeterOut(MeterFigures):
    """The context meter's figures and verdict, and ``summary``: its sentence in the active
    language (``handoff.words.meter.summary``)."""

    summary: str


class StatusOut(TypedDict):
    """The status report (docs/spec.md, State): switches, tokens, blockers, the last record."""

    session: str
    enabled: bool
    requested: bool
    deferred: list[str]
    tokens: TokensOut
    turns: int
    compactions: int
    meter: MeterOut
    redirect: str | None
    predecessor: Annotated[
        str | None, Field(description="The session this one was handed off from (lineage).")
    ]
    successor: Annotated[
        str | None, Field(description="The session this one was handed off to (lineage).")
    ]
    origin: Annotated[
        RecordOut | None, Field(description="The record of the handoff that opened this session.")
    ]
    last: RecordOut | None
    inheritance: list[dict[str, Any]]
    plan_mode_available: bool
    compaction_available: bool
    auto_handoff: Annotated[bool, Field(description="The global autoHandoff switch.")]
    review: Annotated[
        bool, Field(description="This conversation's handoffs wait for review before starting.")
    ]
    backoff: Annotated[
        BackoffOut | None, Field(description="Set while automatic attempts back off.")
    ]
    notices: Annotated[
        list[str], Field(description="One sentence per degraded service that matters.")
    ]


# ``handoffs.json`` version 1 (docs/spec.md, State), as ``handoff.export`` writes it; the keys
# are the specification's (camelCase). ``handoff/schemas/handoffs.v1.json`` is its JSON Schema.
class ExportMainOut(TypedDict):
    enabled: bool
    requested: bool
    inheritedFrom: str | None
    lastAttemptSeq: int | None
    deferred: list[str]


ExportMainOut.__doc__ = "One entry of ``mains`` (docs/spec.md, State)."


class ExportRecordOut(TypedDict):
    id: str
    source: str
    phase: str
    reason: str
    metrics: MetricsOut
    sourceRevision: int
    target: str | None
    brief: dict[str, Any] | None
    error: NotRequired[str]
    sourceRuntime: NotRequired[str]
    targetRuntime: NotRequired[str]


ExportRecordOut.__doc__ = (
    "One entry of ``records``; ``error`` only on a failed record; where its source and its "
    "target run (``product``, ``claude``, ``codex``)."
)


class ExportOut(TypedDict):
    """``handoffs.json`` version 1: ``mains``, ``records`` (oldest first), ``redirects``."""

    version: int
    mains: dict[str, ExportMainOut]
    records: list[ExportRecordOut]
    redirects: Annotated[dict[str, str], Field(description="Source id -> destination id.")]
