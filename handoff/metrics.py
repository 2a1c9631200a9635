"""Step 2, metrics: tokens with their label, turns, compactions, capacity.

docs/spec.md, Token sources and Turns and capacity, state the rules.

Tokens come from the usage projection first, the token meter second, else they are
``unavailable``; the basis (context or cumulative) is the settings store's.
Capacity is the session's own context window when the transcript stated one, else the settings'
per-model override (``SettingsValues.context_windows``), else the host's table
(``ModelSelection.window``), else 0.
"""

from __future__ import annotations

from typing import Any

from handoff import services, store
from handoff.core.tokens import TokenBasis, TokenReading, read_tokens
from handoff.core.trigger import Metrics
from handoff.meter.rules import Hold, meter
from handoff.services import HostSession
from handoff.settings_store import SettingsValues
from handoff.shapes import MeterOut, MetricsOut
from handoff.words.meter import described


def token_reading(session: HostSession, values: SettingsValues) -> TokenReading:
    """Read the session's tokens on the configured basis, with their label (tokens)."""
    projection = services.usage_projection()
    meter = services.token_meter()
    return read_tokens(
        TokenBasis(values.token_basis),
        buckets_total=projection.buckets_total(session) if projection else None,
        context_tokens=projection.context_tokens(session) if projection else None,
        measured=meter.measure(session) if meter else None,
    )


def capacity(session: HostSession, values: SettingsValues, model: str | None = None) -> int:
    """Return the session's context window in tokens (0 when unknown) for ``model`` (None: the
    session's own), resolved as the module's docstring says (docs/design.md, "Context fitting
    of the agent's model call")."""
    if session.context_window:
        return int(session.context_window)
    name = session.model if model is None else model
    if name in values.context_windows:
        return int(values.context_windows[name])
    selection = services.model_selection()
    return selection.window(name) if selection is not None else 0


def session_window(sender: object, session: HostSession, model: str, **kwargs: object) -> int:
    """``host.signals.session_window`` receiver: the window (tokens) the host's agent fits what
    it sends ``model`` for ``session`` into, the one the context meter uses (``capacity``, the
    settings re-read now: Settings first)."""
    return capacity(session, services.load_settings(), model)


def measure(session: HostSession, values: SettingsValues) -> tuple[Metrics, TokenReading]:
    """Return the trigger's metrics and the token reading they were taken from."""
    reading = token_reading(session, values)
    metrics = Metrics(
        tokens=reading.value,
        turns=int(session.turns),
        compactions=int(session.compactions),
        capacity=capacity(session, values),
    )
    return metrics, reading


def hold(session_id: Any, values: SettingsValues) -> Hold | None:
    """Return why automatic handoff will not run for the session now (the gates the idle
    handler checks, ``handoff.attempt``), or None when it runs once the trigger fires."""
    key = str(session_id)
    if store.redirect_of(key) is not None:
        return Hold.HANDED_OFF
    state = store.find_main_state(key)
    if state is None or not state.enabled:
        return Hold.SESSION_OFF
    return None if values.auto_handoff else Hold.GLOBAL_OFF


def context_meter(session: HostSession, values: SettingsValues) -> MeterOut:
    """Return the session's context meter under the settings ``values``.

    docs/design.md, The context meter.
    """
    measured, reading = measure(session, values)
    return meter_of(session.pk, measured, reading, values)


def meter_of(
    session_id: Any, measured: Metrics, reading: TokenReading, values: SettingsValues
) -> MeterOut:
    """Return the context meter of figures already read for ``session_id``, with its sentence
    in the active language."""
    core = meter(measured, values.trigger_config(), reading.as_dict(), hold(session_id, values))
    return described(core)


def metrics_dict(metrics: Metrics) -> MetricsOut:
    """Return ``{"tokens", "turns", "compactions", "capacity"}`` as stored on a record."""
    return MetricsOut(
        tokens=metrics.tokens,
        turns=metrics.turns,
        compactions=metrics.compactions,
        capacity=metrics.capacity,
    )
