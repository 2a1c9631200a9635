"""Fixtures of the host's tests."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.base_user import AbstractBaseUser


@pytest.fixture
def owner(django_user_model: Any) -> AbstractBaseUser:
    """The user ``ada``, who owns the sessions a test makes."""
    user: AbstractBaseUser = django_user_model.objects.create_user("ada")
    return user
