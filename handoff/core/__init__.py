"""The handoff's decision logic in plain Python: no Django, no host, tested without a database."""
