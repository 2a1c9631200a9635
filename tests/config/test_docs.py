"""The README stays a five-minute read and the documents stay navigable: the README opens with
the two commands (``make run``, ``make test``; CI runs the second), stays within 1 500 words,
maps every package the import contracts name, and links only to files that exist; each
``docs/*.md`` lists its sections in a table of contents; neither cites what a clone lacks
(issue numbers, the seeds, the shared design)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from shared_files import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def slug(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def test_the_readme_opens_with_the_two_commands():
    first_block = text(README).split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in first_block.splitlines()]
    assert commands == ["make run", "make test"]
    assert text(README).index("```sh") < text(README).index("\n## ")


def test_the_readme_is_a_five_minute_read():
    assert len(text(README).split()) <= 1500


def test_the_readme_maps_every_package():
    contracts = tomllib.loads(text(ROOT / "pyproject.toml"))["tool"]["importlinter"]
    packages = [*contracts["root_packages"], "handoff/core", "handoff/web", "bench", "samples"]
    mapped = set(re.findall(r"^\| `([\w/]+)/` \|", text(README), re.MULTILINE))
    assert set(packages) <= mapped, set(packages) - mapped


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_every_local_link_resolves(doc: Path):
    targets = [t for t in LINK.findall(text(doc)) if "://" not in t]
    missing = [t for t in targets if not (doc.parent / t).exists()]
    assert missing == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_document_lists_its_sections(doc: Path):
    body = text(doc)
    sections = [s for s in re.findall(r"^## (.+)$", body, re.MULTILINE) if s != "Contents"]
    listed = re.findall(r"^\d+\. \[(.+?)\]\(#(.+?)\)$", body, re.MULTILINE)
    assert [title for title, _ in listed] == sections
    assert [anchor for _, anchor in listed] == [slug(title) for title, _ in listed]


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_nothing_cites_what_a_clone_lacks(doc: Path):
    assert re.findall(r"\b[Ii]ssue #?\d+|\b[Ss]eed 0\d\d|DESIGN\.md", text(doc)) == []
