"""Export of ``handoffs.json`` version 1 (docs/spec.md, State): every key of the specification's
example with its JSON type, plus ``redirects`` and each failed record's ``error``, only the
caller's own, valid against the committed JSON Schema."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import jsonschema
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from handoff_support import boom, make_source, make_user, record_of

from handoff import export, operations
from handoff.attempt import Outcome

pytestmark = pytest.mark.django_db

SCHEMA = json.loads(export.SCHEMA_PATH.read_text())


@pytest.fixture
def state(at_point) -> dict[str, Any]:
    """Alice: one session handed off, one whose attempt failed; Bob: one handed off."""
    alice, bob = make_user("alice"), make_user("bob")
    handed = make_source(alice, title="Handed off")
    started = record_of(operations.run_attempt(handed.pk, manual=True))
    failing = make_source(alice, title="Failing")
    at_point(
        "summarize", lambda a: boom("model down")(a) if a.session_id == str(failing.pk) else None
    )
    failed = operations.run_attempt(failing.pk, manual=True)
    assert failed.outcome is Outcome.FAILED
    theirs = make_source(bob, title="Bob's")
    operations.run_attempt(theirs.pk, manual=True)
    return {"alice": alice, "bob": bob, "handed": handed, "started": started, "failing": failing}


def test_the_export_validates_against_its_schema(state):
    data = export.export(state["alice"].pk)
    jsonschema.validate(data, SCHEMA)


def test_every_key_of_the_seeds_example_with_its_json_type(state):
    data = export.export(state["alice"].pk)
    assert data["version"] == 1
    main = data["mains"][str(state["handed"].pk)]
    assert {k: type(v) for k, v in main.items() if v is not None} == {
        "enabled": bool,
        "requested": bool,
        "lastAttemptSeq": int,
        "deferred": list,
    }
    started = next(r for r in data["records"] if r["phase"] == "started")
    assert set(started) == {
        "id", "source", "phase", "reason", "metrics", "sourceRevision", "target", "brief",
        "sourceRuntime", "targetRuntime",
    }  # fmt: skip
    assert (started["sourceRuntime"], started["targetRuntime"]) == ("product", "product")
    assert set(started["metrics"]) == {"tokens", "turns", "compactions", "capacity"}
    assert isinstance(started["sourceRevision"], int)
    assert started["brief"] is not None and started["brief"]["goal"]
    successor = started["target"]
    assert successor is not None
    assert data["mains"][successor]["inheritedFrom"] == str(state["handed"].pk)
    assert data["redirects"] == {str(state["handed"].pk): successor}


def test_a_failed_record_carries_its_error(state):
    data = export.export(state["alice"].pk)
    failed = next(r for r in data["records"] if r["phase"] == "failed")
    assert failed["source"] == str(state["failing"].pk)
    assert "model down" in failed["error"]


def test_only_the_owners_sessions_are_exported(state):
    data = export.export(state["alice"].pk)
    sources = {r["source"] for r in data["records"]}
    assert sources == {str(state["handed"].pk), str(state["failing"].pk)}
    assert len(export.export(state["bob"].pk)["redirects"]) == 1


def test_the_command_writes_one_users_file_or_everyones(state, tmp_path):
    out = tmp_path / "handoffs.json"
    call_command("handoff", "export", "--user", "alice", "--out", str(out))
    written = json.loads(out.read_text())
    jsonschema.validate(written, SCHEMA)
    assert written == json.loads(json.dumps(export.export(state["alice"].pk)))
    printed = StringIO()
    call_command("handoff", "export", stdout=printed)
    everyone = json.loads(printed.getvalue())
    jsonschema.validate(everyone, SCHEMA)
    assert len(everyone["redirects"]) == 2


def test_the_command_refuses_an_unknown_user(state, tmp_path):
    out = tmp_path / "handoffs.json"
    with pytest.raises(CommandError, match="No user 'carol'"):
        call_command("handoff", "export", "--user", "carol", "--out", str(out))
    assert not out.exists()


def test_the_api_exports_the_callers_own_state(state, client: Client):
    client.force_login(state["bob"])
    response = client.get("/api/handoffs/export")
    assert response.status_code == 200
    data = response.json()
    jsonschema.validate(data, SCHEMA)
    assert data == json.loads(json.dumps(export.export(state["bob"].pk)))
    assert str(state["handed"].pk) not in json.dumps(data)
