"""Code cites the documents a clone has: docs/spec.md and the other docs/ pages, by section.

Non-test code (the packages with their JSON schemas and fixtures, bench, scripts, the project's
templates and static files) names no issue number, no "seed 0xx" and no ``DESIGN.md``: a clone
has none of them. The rule a comment leans on is cited as ``docs/spec.md, <Section>`` (or another
``docs/`` page and one of its ``##`` headings), and every such citation names a heading that
exists.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from shared_files import ROOT

CODE_ROOTS = (
    "agent_hooks",
    "bench",
    "common",
    "config",
    "follower",
    "handoff",
    "handoff_settings",
    "host",
    "scripts",
    "static",
    "templates",
)
SUFFIXES = {".py", ".html", ".js", ".css", ".md", ".txt", ".json"}
OUTSIDE = re.compile(r"\b[Ii]ssues? #?\d+|\b[Ss]eeds? 0\d\d|\bDESIGN\.md")
# "docs/spec.md, Failure outcomes", also across a line break inside a comment or docstring.
CITATION = re.compile(r"\bdocs/(\w+)\.md, [\"“]?((?:[^\n]|\n\s*(?:#|//)?\s*){1,80})")


def code_files() -> list[Path]:
    found = []
    for root in CODE_ROOTS:
        for path in sorted((ROOT / root).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "node_modules" not in path.parts:
                found.append(path)
    return found


def plain(text: str) -> str:
    """Headings and citations compared without backticks, line breaks or comment markers."""
    joined = re.sub(r"\n\s*(?:#|//)?\s*", " ", text)
    return joined.replace("`", "")


@cache
def headings(doc: str) -> tuple[str, ...]:
    path = ROOT / "docs" / f"{doc}.md"
    if not path.is_file():
        return ()
    body = path.read_text(encoding="utf-8")
    return tuple(plain(h) for h in re.findall(r"^##+ (.+)$", body, re.MULTILINE))


def names_a_heading(cited: str, titles: tuple[str, ...]) -> bool:
    """The citation opens with a heading, or with the start of one (cut at ``)``, ``;``, a quote,
    a comma or a full stop: "Real mode" for "Real mode: a model, PostgreSQL, …"); any case."""
    cited = cited.lower()
    cut = re.split(r"[);\"”,.]", cited, maxsplit=1)[0].strip()
    return any(
        cited.startswith(t.lower()) or (len(cut) >= 4 and t.lower().startswith(cut)) for t in titles
    )


def outside_citations() -> list[str]:
    """``path:line: text`` of every citation of something a clone lacks."""
    found = []
    for path in code_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_code_cites_no_issue_no_seed_and_no_design_md():
    assert outside_citations() == []


def test_the_rule_matches_what_a_clone_lacks():
    assert OUTSIDE.search("(issue 17, item 2)")
    assert OUTSIDE.search("seed 003 §6.5")
    assert OUTSIDE.search("(DESIGN.md, Lineage)")
    assert not OUTSIDE.search("docs/spec.md, Failure outcomes; the seed's flush; 3 issues")


def test_a_citation_must_name_a_heading_of_its_document():
    assert names_a_heading("Failure outcomes). The record", headings("spec"))
    assert names_a_heading("Real mode). The environment", headings("operations"))
    assert not names_a_heading("Failure modes). The record", headings("spec"))
    assert not names_a_heading("Failure outcomes", headings("nonexistent"))


def test_every_docs_citation_names_an_existing_section():
    wrong = []
    for path in code_files():
        for doc, rest in CITATION.findall(path.read_text(encoding="utf-8")):
            if not names_a_heading(plain(rest), headings(doc)):
                wrong.append(f"{path.relative_to(ROOT)}: docs/{doc}.md, {plain(rest)[:60]}")
    assert wrong == []
