"""The JSON API keeps its OpenAPI schema: schemathesis over every operation.

Each operation gets a bounded number of generated requests (valid and invalid) through the WSGI
app, signed in with a bearer token, over a user who has a session, a subagent and a record. Every
answer must be documented with its status code, content type and shape, and none may be a 5xx;
a request the schema allows is not refused as invalid (422), and the refusals generation may miss
are checked one by one against the schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings
from jsonschema import Draft202012Validator

from handoff.models import HandoffRecord
from host.auth import issue_token
from host.models import Session

# Few examples per operation keep `make test` quick; derandomized so a failure repeats.
EXAMPLES_PER_OPERATION = 25


@pytest.fixture
def test_connection() -> Iterator[None]:
    """Keep the test's database connection across requests, as Django's test client does.

    The WSGI handler closes old connections when a request starts and ends; the test's
    transaction (and on PostgreSQL its connection) must outlive each request.
    """
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


@pytest.fixture
def bearer(session: Session, immediate_tasks: None) -> dict[str, str]:
    """A caller with something to list: a session, its subagent and a failed record."""
    owner = session.owner
    Session.objects.create(owner=owner, title="helper", cwd="/srv/project", parent=session)
    HandoffRecord.objects.create(
        source=session,
        phase="failed",
        reason="manual",
        metrics={"tokens": 10, "turns": 4, "compactions": 0, "capacity": 0},
        source_revision=0,
        error="the brief failed validation",
    )
    return {"Authorization": f"Bearer {issue_token(owner)}"}


# Loaded at collection (pytest-django has set Django up by then); reading the schema touches no
# database.
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_every_answer_is_documented_and_none_is_a_server_error(
    case: schemathesis.Case, bearer: dict[str, str], test_connection: None
) -> None:
    case.call_and_validate(headers=bearer)


def body_schema(path: str) -> Draft202012Validator:
    """The validator of the JSON body the OpenAPI schema gives ``POST path``."""
    document = schema.raw_schema
    content = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    return Draft202012Validator({**content["schema"], "components": document["components"]})


HANDOFF = "/api/sessions/{session_id}/handoff"
MESSAGES = "/api/sessions/{session_id}/messages"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body"),
    [
        (HANDOFF, {"action": "now", "brief": {}}),
        (HANDOFF, {"action": "status", "brief": {"goal": "Ship it"}}),
        (MESSAGES, {"content": "x", "usage": {"output": 5.5}}),
        (MESSAGES, {"content": "x", "usage": {"cache_read": -1}}),
        (MESSAGES, {"content": "x", "usage": {"output": 10**9 + 1}}),
    ],
)
def test_a_body_the_api_refuses_is_one_the_schema_does_not_allow(
    client: Client, session: Session, path: str, body: dict[str, Any]
) -> None:
    client.force_login(session.owner)
    url = path.format(session_id=session.pk)
    assert client.post(url, body, content_type="application/json").status_code == 422
    assert not body_schema(path).is_valid(body)


@pytest.mark.django_db
def test_a_whole_token_count_written_as_a_float_is_taken_as_the_schema_allows(
    client: Client, session: Session
) -> None:
    body = {"content": "x", "usage": {"output": 5.0, "uncached_input": 1200.0}}
    assert body_schema(MESSAGES).is_valid(body)
    client.force_login(session.owner)
    url = MESSAGES.format(session_id=session.pk)
    answer = client.post(url, body, content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["usage"] == {
        "uncached_input": 1200,
        "output": 5,
        "cache_read": 0,
        "cache_write": 0,
    }
