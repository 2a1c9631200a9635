"""The project installs on every Python that Django 5.2 supports from 3.11 on."""

from __future__ import annotations

import tomllib

import pytest
from packaging.specifiers import SpecifierSet
from shared_files import ROOT

PYPROJECT = ROOT / "pyproject.toml"


@pytest.mark.parametrize("version", ["3.11.0", "3.12.0", "3.13.0"])
def test_requires_python_admits(version: str):
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert version in SpecifierSet(project["requires-python"])
