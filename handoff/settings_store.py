"""The engine's settings: the global switch, thresholds, token basis.

docs/spec.md, Switches and Trigger, states their rules.

``SettingsValues`` is one read of them, ``validate`` their rules: the ranges and defaults are the
trigger's (``handoff.core.trigger``), the bases ``handoff.core.tokens.TokenBasis``. The
Settings → Conversation Collaboration card (``handoff_settings``) edits them through a store.

``DatabaseSettingsStore`` keeps them in the ``HandoffSettings`` singleton row and re-reads it at
every ``load()`` (a toggle in another process is seen by the next step of an attempt).
``ProcessSettingsStore`` is the fallback when the service is left out: settings live in this
process only (docs/spec.md, Degradation) and are lost on restart. Both validate with the
ranges of docs/spec.md, Trigger, and refuse bad input without changing anything.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol

from django.core.exceptions import ValidationError
from django.db import transaction

from handoff.core.tokens import TokenBasis
from handoff.core.trigger import TriggerConfig
from handoff.models import HandoffSettings
from handoff.signals import settings_changed

_DEFAULTS = TriggerConfig()


@dataclass(frozen=True)
class SettingsValues:
    """One read of the settings: switch, thresholds (ratio; tokens; counts), token basis,
    per-model context windows (model -> tokens, overriding ``settings.HOST_CONTEXT_WINDOWS``),
    ``review_handoffs`` (a handoff waits for review before the successor starts, unless the
    conversation chose otherwise) and ``version`` (bumped on every save)."""

    auto_handoff: bool = False
    handoff_ratio: float = _DEFAULTS.handoff_ratio
    handoff_tokens: int = _DEFAULTS.handoff_tokens
    handoff_min_turns: int = _DEFAULTS.handoff_min_turns
    handoff_compactions: int = _DEFAULTS.handoff_compactions
    token_basis: str = TokenBasis.CONTEXT.value
    context_windows: dict[str, int] = field(default_factory=dict)
    review_handoffs: bool = False
    version: int = 0

    def trigger_config(self) -> TriggerConfig:
        """Return the four thresholds as the trigger takes them."""
        return TriggerConfig(
            handoff_ratio=self.handoff_ratio,
            handoff_tokens=self.handoff_tokens,
            handoff_min_turns=self.handoff_min_turns,
            handoff_compactions=self.handoff_compactions,
        )

    def as_dict(self) -> dict[str, Any]:
        """Return the values as a JSON-ready dict."""
        return asdict(self)


def rendered_value(value: object) -> str:
    """A setting's value as the card renders it and sends it back with a save ("true",
    "0.75", "120000", "context"): a save whose field changed since is refused by comparing
    these. The same text as JavaScript's ``String(value)`` of the value in a follower event."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


EDITABLE = tuple(f.name for f in fields(SettingsValues) if f.name != "version")


class SettingsStore(Protocol):
    """What the handoff app needs from a settings store."""

    def load(self) -> SettingsValues:
        """Return the current settings, read afresh."""

    def save(self, **changes: Any) -> SettingsValues:
        """Validate and store ``changes``; return the new settings. Raises ``ValidationError``."""


def validate(current: SettingsValues, changes: dict[str, Any]) -> SettingsValues:
    """Return ``current`` with ``changes`` applied, or raise ``ValidationError`` naming fields.

    Unknown field names, values outside their ranges, an unknown token basis and context
    windows that are not ``{model: whole number of tokens ≥ 0}`` are refused.
    """
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise ValidationError({name: "unknown setting" for name in unknown})
    errors: dict[str, str] = {}
    for switch in ("auto_handoff", "review_handoffs"):
        if switch in changes and not isinstance(changes[switch], bool):
            errors[switch] = "must be true or false"
    if "token_basis" in changes and changes["token_basis"] not in set(TokenBasis):
        errors["token_basis"] = f"must be one of {', '.join(TokenBasis)}"
    if "context_windows" in changes and not _valid_windows(changes["context_windows"]):
        errors["context_windows"] = "must map model names to whole numbers of tokens (0 or more)"
    merged = replace(current, **changes)
    for name, message in merged.trigger_config().errors().items():
        if name in changes:
            errors[name] = message
    if errors:
        raise ValidationError(errors)
    return replace(
        merged,
        handoff_tokens=int(merged.handoff_tokens),
        handoff_min_turns=int(merged.handoff_min_turns),
        handoff_compactions=int(merged.handoff_compactions),
        handoff_ratio=float(merged.handoff_ratio),
        token_basis=str(merged.token_basis),
        context_windows=dict(merged.context_windows),
    )


def _valid_windows(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    return all(
        isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in value.items()
    )


def _values_of(row: HandoffSettings) -> SettingsValues:
    return SettingsValues(**{f.name: getattr(row, f.name) for f in fields(SettingsValues)})


class DatabaseSettingsStore:
    """Settings in the ``HandoffSettings`` row (pk 1), created with the defaults on first use."""

    def load(self) -> SettingsValues:
        """Return the stored settings, read from the database now."""
        row, _ = HandoffSettings.objects.get_or_create(pk=1)
        return _values_of(row)

    def save(self, **changes: Any) -> SettingsValues:
        """Validate and store ``changes``, bumping ``version``; return the new settings.

        Raises ``ValidationError`` and changes nothing on bad input. Runs in one transaction
        with the row locked, announcing the change in it (``handoff.signals.settings_changed``):
        a crash half-way leaves the previous settings and no announcement.
        """
        HandoffSettings.objects.get_or_create(pk=1)
        with transaction.atomic():
            row = HandoffSettings.objects.select_for_update().get(pk=1)
            values = validate(_values_of(row), changes)
            for name in EDITABLE:
                setattr(row, name, getattr(values, name))
            row.version += 1
            row.save()
            stored = _values_of(row)
            settings_changed.send(sender=HandoffSettings, values=stored)
            return stored


class ProcessSettingsStore:
    """Settings held in this process only (the service left out; docs/spec.md, Degradation)."""

    _lock = threading.Lock()
    _values = SettingsValues()

    def load(self) -> SettingsValues:
        """Return this process's settings (the defaults until something is saved)."""
        with self._lock:
            return ProcessSettingsStore._values

    def save(self, **changes: Any) -> SettingsValues:
        """Validate and keep ``changes`` in this process (announced as ``settings_changed``);
        raises ``ValidationError``."""
        with self._lock:
            current = ProcessSettingsStore._values
            values = replace(validate(current, changes), version=current.version + 1)
            ProcessSettingsStore._values = values
        settings_changed.send(sender=HandoffSettings, values=values)
        return values

    @classmethod
    def reset(cls) -> None:
        """Forget the process's settings (back to the defaults)."""
        with cls._lock:
            cls._values = SettingsValues()
