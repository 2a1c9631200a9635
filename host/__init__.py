"""The conversation host that the handoff plugs into: workspaces, sessions, messages, usage."""
