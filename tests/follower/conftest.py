"""Fixtures of the follower's tests: two users, each with a numbered event stream of their own."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser


@pytest.fixture
def ada() -> AbstractBaseUser:
    """The user whose pages follow in most tests."""
    return get_user_model().objects.create_user("ada")


@pytest.fixture
def bob() -> AbstractBaseUser:
    """Another user: none of ada's events may reach bob's sockets."""
    return get_user_model().objects.create_user("bob")
