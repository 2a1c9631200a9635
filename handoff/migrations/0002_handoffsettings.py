# The settings row moves from the handoff_settings app (its table stays where it is).

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("handoff", "0001_initial"),
        ("handoff_settings", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
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
            ],
            database_operations=[],
        ),
    ]
