from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgentHooksConfig(AppConfig):
    """The route, command and installer that hand off live Claude Code and Codex sessions."""

    name = "agent_hooks"
    verbose_name = _("Agent hooks")

    def ready(self) -> None:
        """Hear of the follower's imports (``host.signals.log_followed``): the marker of a
        successor opened without hooks claims its brief (``agent_hooks.followed``)."""
        from agent_hooks.followed import on_log_followed
        from host.signals import log_followed

        log_followed.connect(on_log_followed, dispatch_uid="agent_hooks.followed", weak=False)
