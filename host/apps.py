"""The conversation host app: registers its system checks when Django starts."""

from django.apps import AppConfig


class HostConfig(AppConfig):
    name = "host"
    verbose_name = "Conversation host"

    def ready(self) -> None:
        from host import checks  # noqa: F401  (registers the checks)
