"""The handoff's fixed words in the host's log, shown in the reader's language.

The log keeps what the agent reads, in English: the notice the commit writes on the source
(``handoff.attempt.RELAY_NOTICE``) and the brief a successor is seeded with, its title and
headings (``handoff.core.brief.render_brief``). The pages show those words in the reader's
language: ``in_reader_language`` a notice or a card's title (``settings.HOST_ENTRY_WORDS``),
``brief_headings`` a brief card's headings and its "Goal:" (``settings.HOST_PLUGIN_ENTRY_FILTERS``).
Text they do not know is returned as it is.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from handoff.attempt import RELAY_NOTICE
from handoff.core.brief import HEADINGS as ENGLISH_HEADINGS
from handoff.words.brief import HEADINGS

_RELAY = re.compile(re.escape(RELAY_NOTICE).replace(re.escape("%(named)s"), "(?P<named>.+)"))
_BRIEF_TITLE = re.compile(r"Handoff brief(?: from “(?P<title>.*)”)?")
_HEADING = re.compile(
    r"<h2>(?P<heading>" + "|".join(map(re.escape, ENGLISH_HEADINGS.values())) + r")</h2>"
)
_BY_ENGLISH = {english: HEADINGS[name] for name, english in ENGLISH_HEADINGS.items()}
_GOAL = "<strong>Goal:</strong>"
_TITLE = re.compile(r"<h1>(?P<title>Handoff brief[^<]*)</h1>")


def in_reader_language(text: str) -> str:
    """``text`` (a log notice or a plugin card's title) in the active language when it is the
    relay notice or a brief's title ("Handoff brief from “X”"), else unchanged."""
    relay = _RELAY.fullmatch(text)
    if relay:
        return gettext(RELAY_NOTICE) % {"named": relay["named"]}
    brief = _BRIEF_TITLE.fullmatch(text)
    if brief and brief["title"] is not None:
        return gettext("Handoff brief from “%(title)s”") % {"title": brief["title"]}
    return gettext("Handoff brief") if brief else text


def brief_headings(html: SafeString, session: Any) -> SafeString:
    """A brief card's HTML (escaped Markdown) with its section headings and "Goal:" in the
    active language; any other plugin card's HTML unchanged."""
    return brief_words(html)


def _title(escaped: str) -> str:
    """A brief's title (escaped HTML) in the active language, escaped."""
    return escape(in_reader_language(unescape(escaped)))


def brief_words(html: SafeString) -> SafeString:
    """A brief's HTML (escaped Markdown, ``render_brief`` rendered) with its title, section
    headings and "Goal:" in the active language (the lineage page shows it whole); HTML
    without a brief's "Goal:" unchanged."""
    if _GOAL not in html:
        return html
    titled = _TITLE.sub(
        lambda t: f"<h1>{escape(in_reader_language(unescape(t['title'])))}</h1>", html
    )
    translated = _HEADING.sub(lambda h: f"<h2>{escape(_BY_ENGLISH[h['heading']])}</h2>", titled)
    goal = f"<strong>{escape(gettext('Goal:'))}</strong>"
    return mark_safe(translated.replace(_GOAL, goal, 1))  # noqa: S308 - escaped above
