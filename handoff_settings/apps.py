from django.apps import AppConfig


class HandoffSettingsConfig(AppConfig):
    name = "handoff_settings"
    verbose_name = "Conversation Collaboration settings"

    def ready(self) -> None:
        """Answer ``/handoff`` in the chat composer (``host.signals.composer_command``)."""
        from handoff_settings.commands import handoff_command
        from host.signals import composer_command

        composer_command.connect(handoff_command, dispatch_uid="handoff_settings.commands")
