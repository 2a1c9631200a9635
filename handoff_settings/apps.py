from django.apps import AppConfig


class HandoffSettingsConfig(AppConfig):
    name = "handoff_settings"
    verbose_name = "Conversation Collaboration settings"
