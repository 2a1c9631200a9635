"""The engine's migrations need neither the settings card nor a rebuilt database: no handoff
migration depends on ``handoff_settings``, and the settings row's table is created by the
engine unless an older layout (the card's first migration) created it already."""

from __future__ import annotations

import pytest
from django.db import connection, models
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.state import ProjectState

from handoff.migrations._operations import CreateModelUnlessPresent

TABLE = "handoff_unless_present_probe"


def test_no_handoff_migration_depends_on_the_settings_card() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for (app, name), migration in loader.disk_migrations.items():
        if app == "handoff":
            assert all(dep[0] != "handoff_settings" for dep in migration.dependencies), name


def _probe() -> CreateModelUnlessPresent:
    return CreateModelUnlessPresent(
        name="Probe",
        fields=[("id", models.BigAutoField(primary_key=True)), ("note", models.TextField())],
        options={"db_table": TABLE},
    )


@pytest.mark.django_db(transaction=True)
def test_a_present_table_is_kept_with_its_rows_and_a_missing_one_created() -> None:
    before = ProjectState()
    after = before.clone()
    _probe().state_forwards("handoff", after)
    with connection.schema_editor() as editor:
        _probe().database_forwards("handoff", editor, before, after)  # missing: created
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TABLE} (note) VALUES ('kept')")  # noqa: S608 - a constant
    with connection.schema_editor() as editor:
        _probe().database_forwards("handoff", editor, before, after)  # present: kept
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT note FROM {TABLE}")  # noqa: S608 - a constant
        assert cursor.fetchall() == [("kept",)]
    with connection.schema_editor() as editor:
        _probe().database_backwards("handoff", editor, after, before)  # present: dropped
        _probe().database_backwards("handoff", editor, after, before)  # gone: nothing to do
    assert TABLE not in connection.introspection.table_names()
