"""Backoff after failed automatic attempts (docs/spec.md, Switches): its one home.

- ``rules``: how long to wait after so many failures in a row (plain Python, no Django, like
  ``handoff.core``);
- ``wait``: the failures and the wait kept on the main's state, and whether the wait holds an
  automatic attempt now.
"""
