"""``{{ text|markdown }}`` (host/templatetags/chat_markdown.py): paths and identifiers render as
written; emphasis still works."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from host.templatetags.chat_markdown import markdown

PATHS = st.from_regex(r"[a-z_]{0,6}(/_{0,2}[a-z]{1,6}_{0,2}){1,3}\.(py|md)", fullmatch=True)


@given(PATHS)
def test_a_path_renders_as_written(path: str):
    assert markdown(f"see {path} now") == f"<p>see {path} now</p>\n"


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("__init__ runs first", "<p>__init__ runs first</p>\n"),
        ("pkg.__version__", "<p>pkg.__version__</p>\n"),
        ("snake_case_name", "<p>snake_case_name</p>\n"),
        ("_word_ and _a few words_.", "<p><em>word</em> and <em>a few words</em>.</p>\n"),
        (
            "**bold** and __bold words__",
            "<p><strong>bold</strong> and <strong>bold words</strong></p>\n",
        ),
        ("`a/__b__.py`", "<p><code>a/__b__.py</code></p>\n"),
    ],
)
def test_emphasis_and_identifiers(text: str, html: str):
    assert markdown(text) == html
