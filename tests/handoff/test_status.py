"""One status report built in one place (docs/spec.md, State; Token sources: the labels)."""

from __future__ import annotations

import pytest
from handoff_support import make_source

from handoff import operations, services
from handoff.exceptions import SessionNotFound
from handoff.shapes import MetricsOut, RecordOut, StatusOut
from host import log
from host.sessions import create_session

pytestmark = pytest.mark.django_db

# The keys come from the one definition of each shape, so a key added there is checked here.
KEYS = set(StatusOut.__annotations__)
RECORD_KEYS = set(RecordOut.__annotations__)
METRICS_KEYS = set(MetricsOut.__annotations__)


def test_status_of_a_fresh_session():
    source = make_source()
    report = operations.status(source.pk)
    assert set(report) == KEYS
    assert report["session"] == str(source.pk)
    assert (report["enabled"], report["requested"], report["deferred"]) == (False, False, [])
    assert report["tokens"] == {"value": 150_000, "basis": "context", "label": "exact"}
    assert (report["turns"], report["compactions"]) == (5, 0)
    assert (report["redirect"], report["last"], report["inheritance"]) == (None, None, [])
    assert (report["plan_mode_available"], report["compaction_available"]) == (True, True)
    assert report["notices"] == []


def test_status_after_a_handoff_shows_the_record_and_its_inheritance():
    source = make_source()
    operations.run_attempt(source.pk, manual=True)
    report = operations.status(source.pk)
    last = report["last"]
    assert last is not None
    assert set(last) == RECORD_KEYS
    assert last["phase"] == "started"
    assert set(last["metrics"]) == METRICS_KEYS
    assert report["redirect"] == last["target"]
    assert report["inheritance"] == last["inheritance"]
    assert report["inheritance"][0]["setting"] == "cwd"


def test_label_exact_when_the_buckets_sum_above_zero():
    assert operations.status(make_source().pk)["tokens"]["label"] == "exact"


def test_label_estimated_when_only_the_meter_measures():
    source = create_session(make_source().owner, cwd="/w")
    log.append_message(source, role="user", source_kind="user", content="x" * 400)
    tokens = operations.status(source.pk)["tokens"]
    assert tokens == {"value": 100, "basis": "context", "label": "estimated"}


def test_label_unavailable_when_neither_measures():
    source = create_session(make_source().owner, cwd="/w")
    report = operations.status(source.pk)
    assert report["tokens"]["label"] == "unavailable"
    assert any("automatic handoff is off" in n for n in report["notices"])


def test_cumulative_basis_sums_the_four_buckets():
    source = make_source(turns=2, tokens=1_000)
    services.settings_store().save(token_basis="cumulative")
    assert operations.status(source.pk)["tokens"] == {
        "value": 2 * (1_000 + 100),
        "basis": "cumulative",
        "label": "exact",
    }


def test_a_compaction_does_not_reset_the_cumulative_figure():
    # docs/spec.md, Token sources: compaction only shadows the surface; the cumulative figure is not
    # zeroed.
    source = make_source(turns=2, tokens=1_000)
    services.settings_store().save(token_basis="cumulative")
    log.record_compaction(source, "s" * 4_000, trigger="manual")
    assert operations.status(source.pk)["tokens"] == {
        "value": 2 * (1_000 + 100),
        "basis": "cumulative",
        "label": "exact",
    }
    assert operations.status(source.pk)["compactions"] == 1


def test_a_compaction_after_the_last_call_makes_the_context_figure_an_estimate():
    # The figure is the meter's until the next call, and labelled as the meter's.
    source = make_source(turns=1, tokens=90_000)
    log.record_compaction(source, "s" * 4_000, trigger="manual")
    tokens = operations.status(source.pk)["tokens"]
    assert tokens == {"value": 1_000, "basis": "context", "label": "estimated"}


def test_plan_mode_and_compaction_availability_is_the_sessions_own_agents(settings):
    # docs/spec.md, Degradation: status shows the services this session's agent can really use.
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "plan_mode": None, "compaction": None}
    planner = operations.status(make_source(agent_preset="planner").pk)
    plain = operations.status(make_source(agent_preset="default").pk)
    assert (planner["plan_mode_available"], planner["compaction_available"]) == (True, True)
    assert (plain["plan_mode_available"], plain["compaction_available"]) == (False, False)


def test_enabled_without_the_global_switch_is_explained():
    source = make_source()
    report = operations.enable(source.pk)
    assert report["enabled"] is True and report["auto_handoff"] is False
    assert any("Automatic handoff is off in Settings" in n for n in report["notices"])
    assert not any("autoHandoff" in n for n in report["notices"])  # words, not the setting's key


def test_status_of_an_unknown_session_is_an_error():
    with pytest.raises(SessionNotFound, match="no session"):
        operations.status("4b1c6f8e-0000-0000-0000-000000000000")


def test_status_of_a_malformed_id_is_session_not_found(settings):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "session_controller": None}
    with pytest.raises(SessionNotFound):
        operations.status("not-a-uuid")
