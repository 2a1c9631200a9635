from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HandoffSettingsConfig(AppConfig):
    """Settings → Conversation Collaboration: the card that edits the engine's settings."""

    name = "handoff_settings"
    verbose_name = _("Conversation Collaboration settings")
