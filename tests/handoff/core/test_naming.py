"""docs/spec.md, The transaction: the source is archived in name only, ``· 接续xxxxxx``."""

from __future__ import annotations

from handoff.core.naming import handed_off_title

SUCCESSOR = "3f9a1c2e-0000-4000-8000-000000000000"


def test_title_gains_the_suffix_with_six_characters_of_the_successor():
    assert handed_off_title("Fix the parser", SUCCESSOR) == "Fix the parser · 接续3f9a1c"


def test_suffix_is_not_added_twice():
    once = handed_off_title("Fix", SUCCESSOR)
    assert handed_off_title(once, SUCCESSOR) == once
