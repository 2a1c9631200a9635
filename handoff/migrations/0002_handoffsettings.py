# The settings row belongs to the engine. Its table keeps the name the handoff_settings app gave
# it, and is created here unless present: on a database where handoff_settings 0001 created it
# (before the row moved), it is kept as it is; on a new one, the engine creates it itself and
# migrates without the card installed (handoff_settings 0001 now only records the card's old
# state). The project state after this migration is what it always was.

import django.core.validators
from django.db import migrations, models

from handoff.migrations._operations import CreateModelUnlessPresent


class Migration(migrations.Migration):

    dependencies = [
        ("handoff", "0001_initial"),
    ]

    operations = [
        CreateModelUnlessPresent(
            name="HandoffSettings",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("auto_handoff", models.BooleanField(default=False)),
                ("handoff_ratio", models.FloatField(default=0.75, validators=[django.core.validators.MinValueValidator(0.2), django.core.validators.MaxValueValidator(0.95)])),
                ("handoff_tokens", models.PositiveIntegerField(default=120000, validators=[django.core.validators.MinValueValidator(8000), django.core.validators.MaxValueValidator(1000000)])),
                ("handoff_min_turns", models.PositiveIntegerField(default=4, validators=[django.core.validators.MinValueValidator(2), django.core.validators.MaxValueValidator(100)])),
                ("handoff_compactions", models.PositiveIntegerField(default=3, validators=[django.core.validators.MinValueValidator(0), django.core.validators.MaxValueValidator(100)])),
                ("token_basis", models.CharField(choices=[("context", "Current context"), ("cumulative", "Cumulative usage")], default="context", max_length=20)),
                ("context_windows", models.JSONField(blank=True, default=dict, help_text="Model name -> context window in tokens (overrides).")),
                ("version", models.PositiveIntegerField(default=0, help_text="Bumped on every save.")),
                ("updated", models.DateTimeField(auto_now=True)),
            ],
            options={
                "verbose_name": "handoff settings",
                "verbose_name_plural": "handoff settings",
                "db_table": "handoff_settings_handoffsettings",
            },
        ),
    ]
