"""Agent hooks: hand off a live Claude Code or Codex session through the runtime's own hooks.

The runtime runs a small command at its hook points (Stop, SessionStart, UserPromptSubmit,
SessionEnd, SubagentStart/Stop, Pre/PostCompact); the command posts the runtime's payload to
``/api/hooks/<runtime>`` and prints the answer. This app owns that route, the command, and
``manage.py agent_hooks install|uninstall|status``; it joins the host's followed sessions to the
handoff engine, so it may import both (nothing imports it but ``config``).
"""
