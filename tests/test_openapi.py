"""The JSON API keeps its OpenAPI schema: schemathesis over every operation (issue 9, Bad input).

Each operation gets a bounded number of generated requests (valid and invalid) through the WSGI
app, signed in with a bearer token, over a user who has a session, a subagent and a record. Every
answer must be documented with its status code, content type and shape, and none may be a 5xx.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings

from handoff.models import HandoffRecord
from host.auth import issue_token
from host.models import Session

# Few examples per operation keep `make test` quick; derandomized so a failure repeats.
EXAMPLES_PER_OPERATION = 25


@pytest.fixture
def bearer(django_user_model: Any, immediate_tasks: None) -> dict[str, str]:
    """A caller with something to list: a session, its subagent and a failed record."""
    owner = django_user_model.objects.create_user("ada")
    session = Session.objects.create(owner=owner, title="work", cwd="/srv/project")
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
    case: schemathesis.Case, bearer: dict[str, str]
) -> None:
    case.call_and_validate(headers=bearer)
