"""The JSON API keeps its OpenAPI schema: schemathesis over every operation (issue 9, Bad input).

Each operation gets a bounded number of generated requests (valid and invalid) through the WSGI
app, signed in with a bearer token, over a user who has a session, a subagent and a record. Every
answer must be documented with its status code, content type and shape, and none may be a 5xx.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

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


@schema.hook
def map_body(context: schemathesis.HookContext, body: Any) -> Any:
    """Send whole token counts as JSON integers.

    JSON Schema counts 5.0 as an integer, so schemathesis would send it as valid data; the API
    refuses it on purpose (issue 9: a token count is written 5), which tests/test_api.py checks.
    """
    usage = body.get("usage") if isinstance(body, dict) else None
    if isinstance(usage, dict):
        for name, value in usage.items():
            if isinstance(value, float) and value.is_integer():
                usage[name] = int(value)
    return body


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
