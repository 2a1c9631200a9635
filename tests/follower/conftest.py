"""Fixtures of the follower's tests: two users, each with a numbered event stream of their own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from follower.events import publish
from handoff.web.follow import Kind as HandoffKind


@pytest.fixture
def ada() -> AbstractBaseUser:
    """The user whose pages follow in most tests."""
    return get_user_model().objects.create_user("ada")


@pytest.fixture
def bob() -> AbstractBaseUser:
    """Another user: none of ada's events may reach bob's sockets."""
    return get_user_model().objects.create_user("bob")


def _publish_burst(user_id: int) -> list[dict[str, Any]]:
    """Publish four events for ``user_id`` in one transaction (as a handoff's route does);
    return their frames."""
    phases = ("prepared", "committed", "committed-start-pending", "started")
    with transaction.atomic():
        return [publish(user_id, HandoffKind.HANDOFF_PHASE, {"phase": p}) for p in phases]


@pytest.fixture
def publish_burst() -> Callable[[int], list[dict[str, Any]]]:
    """``publish_burst(user_id)``: four events in one transaction; returns their frames."""
    return _publish_burst
