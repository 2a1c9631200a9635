"""``HANDOFF_SESSION_MODEL``: the handoff's tables point at the host's
session model the setting names, and ownership is the host's to say (``owned_by``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.migration import SwappableTuple
from django.test import Client
from handoff_support import make_source, make_user

import handoff
from handoff import operations, services
from handoff.models import HandoffRecord
from handoff.session_model import check_session_model, get_session_model, session_model_name
from host.auth import issue_token
from host.models import Session
from host.services import SessionController


def test_the_reference_host_names_its_session(settings: Any) -> None:
    assert session_model_name() == "host.Session"
    assert get_session_model() is Session
    assert HandoffRecord._meta.get_field("source").related_model is Session


def test_unset_it_names_no_host_and_the_system_check_says_so(settings: Any) -> None:
    del settings.HANDOFF_SESSION_MODEL
    with pytest.raises(ImproperlyConfigured, match="HANDOFF_SESSION_MODEL is not set"):
        get_session_model()
    (error,) = check_session_model()
    assert error.id == "handoff.E001" and "HANDOFF_SESSION_MODEL is not set" in error.msg


@pytest.mark.parametrize("value", ["Session", "host.models.Session", 42])
def test_a_malformed_setting_is_refused(settings: Any, value: Any) -> None:
    settings.HANDOFF_SESSION_MODEL = value
    with pytest.raises(ImproperlyConfigured, match="HANDOFF_SESSION_MODEL must be of the form"):
        get_session_model()


def test_a_model_that_is_not_installed_fails_the_system_check(settings: Any) -> None:
    settings.HANDOFF_SESSION_MODEL = "chat.Conversation"
    (error,) = check_session_model()
    assert error.id == "handoff.E001"
    assert "'chat.Conversation' that has not been installed" in error.msg


def test_a_model_without_the_needed_fields_fails_the_system_check(settings: Any) -> None:
    settings.HANDOFF_SESSION_MODEL = "host.Workspace"  # has an owner, no title
    (error,) = check_session_model()
    assert error.id == "handoff.E001"
    assert error.msg.endswith("lacks the field(s) the handoff needs: title")


def test_the_reference_host_passes_the_system_check() -> None:
    assert check_session_model() == []


def test_the_handoff_migrations_reach_the_host_only_through_the_setting() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    handoff = [m for (app, _), m in loader.disk_migrations.items() if app == "handoff"]
    assert handoff
    for migration in handoff:
        for dependency in migration.dependencies:
            if dependency[0] != "handoff":
                assert isinstance(dependency, SwappableTuple), (migration.name, dependency)
                assert dependency == ("host", "__first__")


def test_no_handoff_migration_names_the_host_model_literally() -> None:
    folder = Path(handoff.__file__).parent / "migrations"
    for path in folder.glob("0*.py"):
        assert not re.search(r"to=['\"]host\.", path.read_text()), path.name


class NobodyOwnsAnything(SessionController):
    """The reference controller, but the host says the user owns no session."""

    def owned_by(self, owner_id: Any) -> Any:
        return Session.objects.none().values_list("pk", flat=True)


@pytest.fixture
def nobody_owns_anything() -> Any:
    services.register(services.SESSION_CONTROLLER, NobodyOwnsAnything)
    yield
    services.unregister(services.SESSION_CONTROLLER)


@pytest.mark.django_db
def test_the_records_list_asks_the_host_who_owns_what(nobody_owns_anything: None) -> None:
    user = make_user()
    HandoffRecord.objects.create(
        source=make_source(user), phase="failed", reason="manual", source_revision=1
    )
    client = Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user)}")
    response = client.get("/api/handoffs")
    assert response.status_code == 200
    assert response.json()["items"] == []
    assert list(operations.owned_session_ids(user.pk)) == []


@pytest.mark.django_db
def test_without_a_session_controller_the_card_lists_no_activity(settings: Any) -> None:
    from handoff_settings.views import activity_context

    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "session_controller": None}
    user = make_user()
    HandoffRecord.objects.create(
        source=make_source(user), phase="failed", reason="manual", source_revision=1
    )
    assert activity_context(user) == {"last_record": None, "report": None, "deferred_mains": []}
