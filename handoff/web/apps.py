from django.apps import AppConfig


class HandoffWebConfig(AppConfig):
    """The handoff's web layer (``handoff.web``): its templates, template tags, the pages' slot
    templates the host's settings list (``HOST_PAGE_PANELS``) and the composer command."""

    name = "handoff.web"
    label = "handoff_web"
    verbose_name = "Session handoff pages"

    def ready(self) -> None:
        """Answer ``/handoff`` in the chat composer (the host's ``composer_command``)."""
        from handoff.apps import connect_host_signal
        from handoff.web.commands import handoff_command

        connect_host_signal("composer_command", handoff_command)
