"""handoff.settings_store: the settings store service (docs/spec.md, Trigger; Degradation)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from handoff.core.trigger import TriggerConfig
from handoff.models import HandoffSettings
from handoff.settings_store import DatabaseSettingsStore, ProcessSettingsStore

pytestmark = pytest.mark.django_db


def test_defaults_are_the_seeds():
    values = DatabaseSettingsStore().load()
    assert values.auto_handoff is False
    assert values.trigger_config() == TriggerConfig()
    assert values.token_basis == "context"


def test_save_stores_validated_values_and_bumps_the_version():
    store = DatabaseSettingsStore()
    saved = store.save(auto_handoff=True, handoff_ratio=0.5, context_windows={"m": 1000})
    row = HandoffSettings.objects.get(pk=1)
    assert (row.auto_handoff, row.handoff_ratio, row.context_windows) == (True, 0.5, {"m": 1000})
    assert saved.version == row.version == 1
    assert store.load() == saved


def test_load_rereads_storage_each_time():
    store = DatabaseSettingsStore()
    store.load()
    HandoffSettings.objects.filter(pk=1).update(auto_handoff=True)
    assert store.load().auto_handoff is True


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"handoff_ratio": 0.96}, "handoff_ratio"),
        ({"handoff_tokens": 7_999}, "handoff_tokens"),
        ({"handoff_min_turns": 1}, "handoff_min_turns"),
        ({"handoff_compactions": 101}, "handoff_compactions"),
        ({"handoff_tokens": 9_000.5}, "handoff_tokens"),
        ({"auto_handoff": "yes"}, "auto_handoff"),
        ({"token_basis": "billing"}, "token_basis"),
        ({"context_windows": {"m": -1}}, "context_windows"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_bad_input_is_refused_with_nothing_changed(changes, field):
    store = DatabaseSettingsStore()
    before = store.load()
    with pytest.raises(ValidationError) as error:
        store.save(**changes)
    assert field in error.value.message_dict
    assert store.load() == before


def test_range_edges_are_accepted():
    saved = DatabaseSettingsStore().save(
        handoff_ratio=0.2, handoff_tokens=1_000_000, handoff_min_turns=100, handoff_compactions=0
    )
    assert saved.trigger_config() == TriggerConfig(0.2, 1_000_000, 100, 0)


def test_process_store_keeps_values_in_this_process_only():
    try:
        saved = ProcessSettingsStore().save(auto_handoff=True)
        assert ProcessSettingsStore().load() == saved
        assert not HandoffSettings.objects.exists()
        with pytest.raises(ValidationError):
            ProcessSettingsStore().save(handoff_ratio=2)
        assert ProcessSettingsStore().load() == saved
    finally:
        ProcessSettingsStore.reset()
    assert ProcessSettingsStore().load().auto_handoff is False
