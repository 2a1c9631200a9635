"""Main-session handoff in a Django host (docs/spec.md states its rules).

``handoff.core`` holds the decision logic in plain Python; the Django modules around it store
records, run the transaction and reach the host only through ``handoff.services``. A concept
split over those layers has one package (``backoff``, ``lineage``, ``meter``, ``digest``: its
pure rules, its stored part, its page); the words people read are in ``words``, one module
per surface; the settings with their defaults in ``conf``.
"""
