"""The offline summary's digest of a session's log, in its one home.

- ``fold``: the digest itself, a bounded state folded over the log's entries, and what the
  offline brief reads of it (plain Python, no Django, like ``handoff.core``; the pure-core
  contract in pyproject.toml covers it);
- ``per_session``: the digest kept per session (``SummaryDigest``), brought up to date at each
  idle and each summary.
"""
