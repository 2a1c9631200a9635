"""The English words a reader sees in a page meant to be in Simplified Chinese.

Its visible text, without user content and code (elements marked ``translate="no"``,
``<code>``, ``<pre>``), scripts, styles and the title, Latin words of two letters or more,
except the words of ``ALLOWED``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Names, commands and the seed's own terms that stay as they are in the Chinese UI.
ALLOWED = {
    "Session",
    "Handoff",  # the product's name
    "EN",  # the language choice
    "Token",
    "token",
    "Agent",
    "agent",
    "Plan",
    "sandbox",  # the seed's Chinese keeps these words
    "Shift",  # a key
    "handoff",
    "status",
    "compact",
    "now",
    "enable",
    "disable",  # the composer's commands
}
SKIPPED = {"script", "style", "code", "pre", "title"}
VOID = {"input", "br", "img", "meta", "link", "hr", "source", "wbr"}


class VisibleText(HTMLParser):
    """The text a reader sees, without user content, code and scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []  # per open element: whether its text is skipped
        self.words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        inherited = bool(self.stack and self.stack[-1])
        self.stack.append(inherited or tag in SKIPPED or ("translate", "no") in attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not (self.stack and self.stack[-1]):
            self.words += re.findall(r"[A-Za-z]{2,}", data)


def english_words(html: str) -> list[str]:
    """The Latin words of ``html``'s visible text, in order, but the ``ALLOWED`` ones."""
    parser = VisibleText()
    parser.feed(html)
    return [word for word in parser.words if word not in ALLOWED]
