"""Helpers every app may use and that know no app: counters in one statement (``sql``), the
JSON API's shared answers and paging (``api_conventions``), the text the database cannot store
(``text``). The bottom layer: it imports none of the project's packages, and ``config`` only
wires them."""
