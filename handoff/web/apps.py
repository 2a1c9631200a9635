from django.apps import AppConfig


class HandoffWebConfig(AppConfig):
    """The handoff's web layer (``handoff.web``): its template tags and the composer command."""

    name = "handoff.web"
    label = "handoff_web"
    verbose_name = "Session handoff pages"

    def ready(self) -> None:
        """Answer ``/handoff`` in the chat composer (``host.signals.composer_command``)."""
        from handoff.web.commands import handoff_command
        from host.signals import composer_command

        composer_command.connect(handoff_command, dispatch_uid="handoff.web.commands")
