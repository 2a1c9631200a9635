"""docs/spec.md stays true to the tree: every module, test and function it names exists, and it
cites nothing a clone does not have (issue numbers, the seeds, the shared design)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest
from shared_files import ROOT

SPEC = ROOT / "docs" / "spec.md"
TEXT = SPEC.read_text(encoding="utf-8")

TESTS = sorted(set(re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", TEXT)))
PATHS = sorted(
    set(
        re.findall(
            r"`((?:agent_hooks|common|config|follower|handoff|handoff_settings|host|templates|tests)"
            r"/[\w/.]+\.(?:py|js|html))",
            TEXT,
        )
    )
)
NAMED = sorted(
    (module, name)
    for module, names in re.findall(r"`((?:follower|handoff|host)/[\w/]+\.py)` \(([^)]*)\)", TEXT)
    for name in re.findall(r"`(\w+)`", names)
)


@cache
def functions_of(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_the_spec_cites_tests_and_modules():
    assert len(TESTS) > 200 and len(PATHS) > 50 and len(NAMED) > 50


@pytest.mark.parametrize(("path", "name"), TESTS, ids=[f"{p}::{n}" for p, n in TESTS])
def test_every_cited_test_exists(path: str, name: str):
    assert (ROOT / path).is_file(), f"docs/spec.md cites {path}, which does not exist"
    assert name in functions_of(path), f"docs/spec.md cites {path}::{name}, which does not exist"


@pytest.mark.parametrize("path", PATHS)
def test_every_cited_file_exists(path: str):
    assert (ROOT / path).is_file(), f"docs/spec.md cites {path}, which does not exist"


@pytest.mark.parametrize(("module", "name"), NAMED, ids=[f"{m}:{n}" for m, n in NAMED])
def test_every_name_cited_beside_a_module_is_in_it(module: str, name: str):
    text = Path(ROOT / module).read_text(encoding="utf-8")
    assert re.search(rf"\b{name}\b", text), f"docs/spec.md names {name} in {module}: not there"


def test_the_spec_cites_nothing_outside_the_tree():
    found = re.findall(r"\b[Ii]ssue #?\d+|\b[Ss]eed 0\d\d|\bDESIGN\.md|\.\./shared", TEXT)
    assert found == []


def test_the_contents_list_every_section_in_order():
    sections = re.findall(r"^## (.+)$", TEXT, re.MULTILINE)
    listed = re.findall(r"^\d+\. \[(.+?)\]\(#", TEXT, re.MULTILINE)
    assert listed == [s for s in sections if s != "Contents"]
