"""The conversation host app: registers its system checks and the task worker's wake-up
(``host.wake``) when Django starts."""

from django.apps import AppConfig


class HostConfig(AppConfig):
    name = "host"
    verbose_name = "Conversation host"

    def ready(self) -> None:
        from django_tasks_db.compat import task_enqueued

        from host import checks  # noqa: F401  (registers the checks)
        from host.wake import task_queued

        task_enqueued.connect(task_queued, dispatch_uid="host.wake")
