"""The host contract (``tests/host_contract.py``) on the reference host (``host/``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import make_source, make_user
from host_contract import *  # noqa: F403 - the shared test functions and their fixtures

from host.intake import post_message
from host.models import Message


class ReferenceHost:
    """``host_contract.ChatHost`` over the reference host."""

    def user(self, name: str) -> Any:
        return make_user(name)

    def conversation(self, owner: Any, *, tokens: int) -> Any:
        return make_source(owner, tokens=tokens)

    def post(self, session: Any, text: str) -> None:
        post_message(session, content=text)

    def log(self, session: Any) -> list[tuple[str, str]]:
        rows = Message.objects.filter(session_id=session.pk).order_by("seq")
        return [(str(role), content) for role, content in rows.values_list("role", "content")]

    def page_path(self, session: Any) -> str:
        return reverse("chat:session", args=[session.pk])

    def page(self, client: Client, session: Any) -> str:
        response = client.get(self.page_path(session))
        assert response.status_code == 200
        return response.content.decode()


@pytest.fixture
def chat_host(settings: Any) -> ReferenceHost:
    """The reference host, its tasks run inline."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.HOST_TASKS_RUN_IN_CALLER = True
    return ReferenceHost()
