"""``handoff``'s public API: the names ``__all__`` lists, each the object of its home module,
resolved on first use (importing the package imports no model)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import handoff


def test_every_public_name_is_its_home_modules_object() -> None:
    assert handoff.__all__ == sorted(set(handoff.__all__))
    for name in handoff.__all__:
        home = importlib.import_module(handoff._HOME_OF[name])
        assert getattr(handoff, name) is getattr(home, name), name
    assert "act" in dir(handoff)


def test_no_public_name_is_shadowed_by_a_module_of_the_package() -> None:
    modules = {info.name for info in pkgutil.iter_modules(handoff.__path__)}
    assert not modules & set(handoff.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="nothing_here"):
        handoff.nothing_here  # noqa: B018 - the read is the test


def test_importing_the_package_configures_nothing_and_imports_no_model() -> None:
    probe = (
        "import sys, handoff; "
        "assert handoff.__all__; "
        "assert not [m for m in sys.modules if m.startswith(('handoff.', 'django.db.models'))], "
        "sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, env={"PATH": ""})
