"""A second, minimal chat host for the handoff : the proof of the seam.

Its own session model (``Conversation``, ``HANDOFF_SESSION_MODEL = "plain_host.Conversation"``),
its own log, its own signals and page, the services the handoff needs
(``tests.plain_host.services``) and its own follower source (``tests.plain_host.follow``); the
handoff's pages and the follower are installed through their settings, nothing of ``host/``. Its
settings (``tests.plain_host.settings``) and test database are its own: ``make test`` runs
``tests/plain_host`` in a second pytest process.
"""
