"""Each app's settings as one typed object with its defaults (``common/app_settings.py``;
docs/operations.md, Settings of the apps)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from follower.conf import FollowerSettings, follower_settings
from handoff.conf import HandoffSettings, handoff_settings
from handoff_settings.conf import CardSettings, card_settings
from host.conf import HostSettings, host_settings

OBJECTS = [
    (handoff_settings, HandoffSettings),
    (follower_settings, FollowerSettings),
    (card_settings, CardSettings),
    (host_settings, HostSettings),
]


@pytest.mark.parametrize(("read", "cls"), OBJECTS)
def test_a_host_that_sets_nothing_gets_every_default(read: Any, cls: Any, settings: Any):
    """Unset, each setting is its field's default: a plugin needs none of them defined."""
    prefixes = ("HANDOFF_", "FOLLOWER_", "HOST_", "AGENT_HOOKS_", "SECRET_KEY_GENERATED")
    for name in [name for name in dir(django_settings) if name.startswith(prefixes)]:
        delattr(settings, name)
    assert read() == cls()


def test_a_setting_is_read_again_at_each_use(settings: Any):
    """``override_settings`` (here pytest-django's fixture) applies to the next read."""
    settings.FOLLOWER_EVENT_LIMIT = 7
    assert follower_settings().event_limit == 7
    settings.FOLLOWER_EVENT_LIMIT = 9
    assert follower_settings().event_limit == 9


def test_a_number_from_the_environment_is_converted(settings: Any):
    """A duration given as text (as an environment variable is) reads as its number."""
    settings.HANDOFF_BACKOFF_BASE = "90"
    settings.FOLLOWER_POLL_INTERVAL = "0.5"
    assert handoff_settings().backoff_base == 90
    assert follower_settings().poll_interval == 0.5


def test_a_setting_outside_the_prefix_is_read_by_its_own_name(settings: Any, tmp_path: Path):
    """The terminal brief's folder is ``AGENT_HOOKS_BRIEF_DIR``; unset, under ``BASE_DIR``."""
    settings.AGENT_HOOKS_BRIEF_DIR = tmp_path
    assert handoff_settings().brief_folder() == tmp_path
    del settings.AGENT_HOOKS_BRIEF_DIR
    assert handoff_settings().brief_folder() == Path(settings.BASE_DIR) / "var" / "briefs"


def test_the_objects_cannot_be_changed():
    """The settings are the host's: an object read from them is frozen."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        handoff_settings().review_timeout = 1  # type: ignore[misc]
