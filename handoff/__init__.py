"""Main-session handoff in a Django host (docs/spec.md states its rules).

``handoff.core`` holds the decision logic in plain Python; the Django modules around it store
records, run the transaction and reach the host only through ``handoff.services``.
"""
