"""The apps query through the ORM, never through its compiler.

Compiling a queryset and running its SQL through ``raw()`` depends on the order Django's
compiler emits parameters, which no release promises. A raw query the ORM cannot say is written
out and documented instead (``config.sql``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Attributes whose use means reaching into the compiler or handing compiled SQL to ``raw()``.
COMPILER_INTERNALS = {"get_compiler", "as_sql", "raw"}


def _uses(package: str) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in COMPILER_INTERNALS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    return found


@pytest.mark.parametrize("package", ["host", "handoff"])
def test_the_app_runs_no_compiled_sql(package):
    assert _uses(package) == []
