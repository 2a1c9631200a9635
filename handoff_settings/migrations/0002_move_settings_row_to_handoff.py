# The settings row now belongs to the handoff app (handoff 0002); its table is kept.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("handoff_settings", "0001_initial"),
        ("handoff", "0002_handoffsettings"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="HandoffSettings")],
            database_operations=[],
        ),
    ]
