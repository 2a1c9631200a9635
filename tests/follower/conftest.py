"""Fixtures of the follower's tests: two users, each with a numbered event stream of their own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from published import publish_phases


@pytest.fixture
def ada() -> AbstractBaseUser:
    """The user whose pages follow in most tests."""
    return get_user_model().objects.create_user("ada")


@pytest.fixture
def bob() -> AbstractBaseUser:
    """Another user: none of ada's events may reach bob's sockets."""
    return get_user_model().objects.create_user("bob")


def _publish_burst(user_id: int) -> list[dict[str, Any]]:
    """Publish four events for ``user_id`` in one transaction; return their frames."""
    return publish_phases(user_id, "prepared", "committed", "committed-start-pending", "started")


@pytest.fixture
def publish_burst() -> Callable[[int], list[dict[str, Any]]]:
    """``publish_burst(user_id)``: four events in one transaction; returns their frames."""
    return _publish_burst
