"""A second, minimal chat host for the handoff (issue 20, Deliver 6): the proof of the seam.

Its own session model (``Conversation``, ``HANDOFF_SESSION_MODEL = "plain_host.Conversation"``),
its own log, its own signals and page, and the services the handoff needs
(``tests.plain_host.services``); nothing of ``host/``, ``handoff.web`` or ``follower``. Its
settings (``tests.plain_host.settings``) and test database are its own: ``make test`` runs
``tests/plain_host`` in a second pytest process.
"""
