"""Migration operations of the handoff's own (a module the migration loader skips: ``_``).

``CreateModelUnlessPresent``: ``CreateModel`` for a table an older layout may already have
created. The settings row's table (``handoff_settings_handoffsettings``) was first created by
the card's migration (``handoff_settings`` 0001); the engine's ``0002_handoffsettings`` creates
it now, so the engine migrates without the card installed, and leaves it as it is on a database
where the card's migration created it before.
"""

from typing import Any

from django.db import migrations


class CreateModelUnlessPresent(migrations.CreateModel):
    """``CreateModel`` whose table is created only when missing, and dropped on the way back only
    when present; the project state changes exactly as ``CreateModel``'s."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if not self._present(app_label, schema_editor, to_state):
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if self._present(app_label, schema_editor, from_state):
            super().database_backwards(app_label, schema_editor, from_state, to_state)

    def _present(self, app_label: str, schema_editor: Any, state: Any) -> bool:
        table = state.apps.get_model(app_label, self.name)._meta.db_table
        return table in schema_editor.connection.introspection.table_names()

    def describe(self) -> str:
        return f"Create model {self.name} unless its table is present"
