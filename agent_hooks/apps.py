from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgentHooksConfig(AppConfig):
    """The route, command and installer that hand off live Claude Code and Codex sessions."""

    name = "agent_hooks"
    verbose_name = _("Agent hooks")
