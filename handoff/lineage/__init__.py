"""Lineage (docs/design.md, Lineage): a session's chain of hops, in its one home.

- ``records``: the hops as the records state them (predecessor, successor, the whole chain,
  the host sidebar's links); the engine reads them;
- ``page``: what the lineage page and the conversation header show of a chain; only the web
  layer (``handoff.web``) imports it (a contract in pyproject.toml).
"""
