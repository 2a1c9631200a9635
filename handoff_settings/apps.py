from django.apps import AppConfig


class HandoffSettingsConfig(AppConfig):
    """Settings → Conversation Collaboration: the card that edits the engine's settings."""

    name = "handoff_settings"
    verbose_name = "Conversation Collaboration settings"
