"""Main-session handoff (seed 000) in a Django host (seed 003 §5–6).

``handoff.core`` holds the decision logic in plain Python; the Django modules around it store
records, run the transaction and reach the host only through ``handoff.services``.
"""
