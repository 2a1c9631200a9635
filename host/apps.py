"""The conversation host app: registers its system checks and the task worker's wake-up
(``host.wake``) when Django starts."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HostConfig(AppConfig):
    name = "host"
    verbose_name = _("Conversation host")

    def ready(self) -> None:
        from django_tasks_db.compat import task_enqueued

        from host import checks  # noqa: F401  (registers the checks)
        from host.wake import task_queued

        task_enqueued.connect(task_queued, dispatch_uid="host.wake")
