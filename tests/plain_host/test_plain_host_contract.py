"""The host contract (``tests/host_contract.py``) on the plain host (``tests/plain_host``).

Run in a pytest process of its own, once with UUID keys and once with integer keys:
``pytest tests/plain_host --ds=tests.plain_host.settings`` and
``--ds=tests.plain_host.int_settings`` (``make test`` does both).
"""

from __future__ import annotations

import sys
from typing import Any
from uuid import UUID

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from host_contract import *  # noqa: F403 - the shared test functions and their fixtures

from tests.plain_host import chat
from tests.plain_host.models import Conversation, Line

CWD = "/work/demo"


class PlainHost:
    """``host_contract.ChatHost`` over the plain host."""

    def user(self, name: str) -> Any:
        return get_user_model().objects.get_or_create(username=name)[0]

    def conversation(self, owner: Any, *, tokens: int) -> Conversation:
        conversation = Conversation.objects.create(
            owner=owner, title="Refactor the parser", cwd=CWD
        )
        for i in range(5):
            chat.append(conversation, "user", f"Please refactor {CWD}/src/parser_{i}.py.")
            chat.answer(conversation, tokens=tokens)
        conversation.refresh_from_db()
        return conversation

    def post(self, session: Conversation, text: str) -> None:
        chat.post(session, text)

    def log(self, session: Conversation) -> list[tuple[str, str]]:
        return list(Line.objects.filter(conversation=session).values_list("role", "content"))

    def page_path(self, session: Conversation) -> str:
        return f"/c/{session.pk}/"

    def page(self, client: Client, session: Conversation) -> str:
        response = client.get(self.page_path(session))
        assert response.status_code == 200
        return response.content.decode()


@pytest.fixture
def chat_host() -> PlainHost:
    """The plain host."""
    return PlainHost()


def test_this_process_runs_on_the_plain_hosts_session_model(settings: Any) -> None:
    from handoff.session_model import get_session_model, session_key_type

    assert get_session_model() is Conversation
    integer_keys = getattr(settings, "PLAIN_HOST_INTEGER_KEYS", False)
    assert session_key_type() is (int if integer_keys else UUID)


def test_no_module_of_the_reference_host_is_loaded() -> None:
    import handoff.attempt
    import handoff.export
    import handoff.operations  # noqa: F401 - the engine the contract drives

    assert {name for name in sys.modules if name.split(".")[0] in {"host", "config"}} == set()
