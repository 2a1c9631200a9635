"""The one status report every surface shows (docs/spec.md, State: the status report).

``build(session_id)`` makes it, a ``StatusOut`` (``handoff.shapes``, where each shape is declared
once); ``manage.py handoff status``, the API, ``/handoff status`` in the composer and the
settings card all print it:

``{"session", "enabled", "requested", "deferred", "tokens": {"value", "basis", "label"},
"turns", "compactions", "meter", "redirect", "predecessor", "successor", "origin", "last",
"inheritance", "plan_mode_available", "compaction_available", "auto_handoff", "review", "backoff",
"notices"}``

``predecessor`` / ``successor`` are the session's neighbours in its chain and ``origin``
``record_dict`` of the hop that opened it, inheritance report included (``handoff.lineage.records``,
docs/design.md, Lineage), so the status of a successor says where it came from. ``meter`` is
the context meter (``handoff.meter.rules``, docs/design.md, The context meter) of the same
figures.

``review``: whether this main's handoffs wait for review (its own choice, else the settings);
``backoff``: until when and why automatic attempts wait after failures (``None``: they do not).
``last`` is ``record_dict`` of the session's latest record (or ``None``), ``inheritance`` that
record's report rows, ``notices`` one sentence per degraded service (docs/spec.md, Degradation) that
matters for this session. Reading never changes anything.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from handoff import degradation, metrics, services, store
from handoff.backoff import wait
from handoff.core.phases import Phase
from handoff.core.tokens import TokenBasis, TokenLabel, TokenReading
from handoff.core.trigger import Metrics
from handoff.degradation import Degradation
from handoff.lineage import records
from handoff.models import HandoffRecord, MainState
from handoff.shapes import BackoffOut, RecordOut, StatusOut

# Marked for translation only: the report (and the API) keeps it in English; pages translate
# it where they show it (``{% translate notice %}``). The notices of missing services are the
# degradation table's (``handoff.degradation``).
AUTO_OFF = gettext_noop(
    "Automatic handoff is off in Settings: this conversation's switch takes effect once it is on."
)


def record_dict(record: HandoffRecord) -> RecordOut:
    """Return a record as every surface shows it (the status's ``last``): a ``RecordOut``.

    ``{"id", "source", "target", "phase", "reason", "metrics": {"tokens", "turns",
    "compactions", "capacity"}, "source_revision", "brief", "error", "inheritance", "created",
    "updated"}``; ids are strings, times ISO 8601, a figure missing from the stored metrics 0.
    """
    stored = record.metrics
    return {
        "id": str(record.pk),
        "source": str(record.source_id),
        "target": str(record.target_id) if record.target_id else None,
        "phase": record.phase,
        "reason": record.reason,
        "metrics": {
            "tokens": int(stored.get("tokens", 0)),
            "turns": int(stored.get("turns", 0)),
            "compactions": int(stored.get("compactions", 0)),
            "capacity": int(stored.get("capacity", 0)),
        },
        "source_revision": record.source_revision,
        "brief": record.brief,
        "original_brief": record.original_brief,
        "review_until": record.review_until.isoformat() if record.review_until else None,
        "error": record.error,
        "inheritance": list(record.inheritance or []),
        "created": record.created.isoformat(),
        "updated": record.updated.isoformat(),
    }


def _missing_host_wide() -> list[Degradation]:
    """The rows of the degradation table that apply to every session now."""
    missing = []
    if services.llm() is None:
        missing.append(degradation.LLM)
    if services.get(services.SETTINGS_STORE) is None:
        missing.append(degradation.SETTINGS)
    channel = services.status_channel()
    if channel is None or not channel.available():
        missing.append(degradation.WEB_SERVER)
    return missing


def backoff_dict(state: MainState | None, last: HandoffRecord | None) -> BackoffOut | None:
    """Return the backoff holding automatic attempts now, or ``None`` (``handoff.backoff.wait``)."""
    if state is None or state.retry_at is None or wait.holds(state, timezone.now()) is None:
        return None
    failed = last is not None and last.phase == Phase.FAILED
    return BackoffOut(
        until=state.retry_at.isoformat(),
        failures=state.failures,
        reason=last.error if last is not None and failed else "",
    )


def build(session_id: Any) -> StatusOut:
    """Build the report for ``session_id`` from storage and the services, read now.

    Without a session controller the session's own figures are unknown: they read 0 with
    label ``unavailable`` and the report says why.
    """
    key = str(session_id)
    values = services.load_settings()
    state = store.find_main_state(key)
    redirect = store.redirect_of(key)
    record = store.last_record(key)
    origin = records.origin(key)
    onward = records.onward(key)
    controller = services.session_controller()
    session = controller.get(key) if controller is not None else None
    missing = _missing_host_wide()
    if controller is None:
        missing.append(degradation.SESSION_CONTROLLER)
    if session is not None:
        measured, reading = metrics.measure(session, values)
        plan_mode = services.plan_mode_for(session) is not None
        compaction = services.compaction_for(session) is not None
    else:
        measured = Metrics(tokens=0, turns=0, compactions=0, capacity=0)
        reading = TokenReading(0, TokenBasis(values.token_basis), TokenLabel.UNAVAILABLE)
        plan_mode = compaction = False
    enabled = bool(state and state.enabled)
    if reading.label is TokenLabel.UNAVAILABLE and controller is not None:
        missing.append(degradation.TOKEN_SOURCES)
    if session is not None and not compaction:
        missing.append(degradation.COMPACTION)
    if session is not None and not plan_mode:
        missing.append(degradation.PLAN_MODE)
    notices = degradation.notices(missing)
    if enabled and not values.auto_handoff:
        notices.append(AUTO_OFF)
    return StatusOut(
        session=key,
        enabled=enabled,
        requested=bool(state and state.requested),
        deferred=list(state.deferred) if state else [],
        tokens=reading.as_dict(),
        turns=measured.turns,
        compactions=measured.compactions,
        meter=metrics.meter_of(key, measured, reading, values),
        redirect=str(redirect.destination_id) if redirect else None,
        predecessor=str(origin.source_id) if origin else None,
        successor=str(onward.target_id) if onward else None,
        origin=record_dict(origin) if origin else None,
        last=record_dict(record) if record else None,
        inheritance=list(record.inheritance or []) if record else [],
        plan_mode_available=plan_mode,
        compaction_available=compaction,
        auto_handoff=values.auto_handoff,
        review=values.review_handoffs if state is None or state.review is None else state.review,
        backoff=backoff_dict(state, record),
        notices=notices,
    )
