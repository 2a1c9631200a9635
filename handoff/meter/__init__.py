"""The context meter (docs/design.md, The context meter): how near an idle main is to the trigger,
in its one home.

- ``rules``: the meter's figures and verdict, from the trigger's own inputs (plain Python, no
  Django, like ``handoff.core``; the pure-core contract in pyproject.toml covers it);
- ``fragment``: its HTML fragment, one render for the panel and the follower's events; only the
  web layer (``handoff.web``) imports it.

Its sentence in the reader's language is with the other words people read
(``handoff.words.meter``); its inputs are read by ``handoff.metrics``.
"""
