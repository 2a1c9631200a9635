"""``manage.py create_api_token USER`` (docs/api.md): a bearer token that works against the API."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from host.models import ApiToken

pytestmark = pytest.mark.django_db


def create_token(username: str) -> str:
    out = StringIO()
    call_command("create_api_token", username, stdout=out)
    return out.getvalue().strip()


def test_prints_a_token_that_authenticates_api_requests():
    get_user_model().objects.create_user("ada")
    token = create_token("ada")

    response = Client().get("/api/sessions", HTTP_AUTHORIZATION=f"Bearer {token}")

    assert response.status_code == 200
    assert response.json() == {"items": [], "count": 0}


def test_stores_only_the_digest_of_the_token():
    user = get_user_model().objects.create_user("ada")
    token = create_token("ada")

    stored = ApiToken.objects.get(user=user)
    assert stored.digest != token
    assert len(stored.digest) == 64
    assert not ApiToken.objects.filter(digest__contains=token).exists()


def test_each_call_prints_a_new_token():
    get_user_model().objects.create_user("ada")

    assert create_token("ada") != create_token("ada")
    assert ApiToken.objects.count() == 2


def test_unknown_user_is_a_command_error_and_stores_nothing():
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        create_token("nobody")
    assert ApiToken.objects.count() == 0


def test_a_made_up_token_is_refused():
    get_user_model().objects.create_user("ada")
    create_token("ada")

    response = Client().get("/api/sessions", HTTP_AUTHORIZATION="Bearer not-a-real-token")

    assert response.status_code == 401
    assert "Authentication required" in response.json()["detail"]


def test_a_deactivated_users_token_is_refused():
    user = get_user_model().objects.create_user("ada")
    token = create_token("ada")
    user.is_active = False
    user.save()

    response = Client().get("/api/sessions", HTTP_AUTHORIZATION=f"Bearer {token}")

    assert response.status_code == 401
