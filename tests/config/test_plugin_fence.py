"""The handoff's apps name nothing of the reference host (docs/design.md, The follower's seam).

``handoff/``, ``handoff_settings/`` and ``follower/`` run on any host (``tests/plain_host``), so
what they say in code, not in their documentation, names none of the host's:

- its module paths and its app label in Python strings (``"host.…"``: a model label, a dotted
  path) and its URL names (``"chat:…"``), in Python strings, templates and scripts;
- its DOM ids and classes (those the host's templates and scripts define and the handoff's
  templates do not): in the handoff's scripts and style sheets, and in its templates' htmx
  selectors (``hx-target``, ``hx-select``, ``hx-include``, ``hx-indicator``, ``from:``).
  The classes the handoff's markup carries for the host's style sheet to dress are not
  references: a host without them shows the markup plain.

Docstrings and comments may name the host (they document the reference integration); the
agent runtimes' names (Claude Code, Codex) are the handoff's own. The bare string ``"host"``
is not checked: it is also the HTTP header (``follower/origin.py``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from shared_files import ROOT

PLUGIN = ("handoff", "handoff_settings", "follower")
HOST_TEMPLATES = ROOT / "templates"
HOST_STATIC = ROOT / "static"

HOST_NAME = re.compile(r"(?<![\w.])host\.[A-Za-z_][\w.]*|\bchat:[a-z_]+")
"""A host module path or model label (``host.Session``), or a host URL name (``chat:session``)."""

ID_ATTRIBUTE = re.compile(r"""\bid=["']([A-Za-z][\w-]*)["']""")
CLASS_ATTRIBUTE = re.compile(r"""\bclass=["']([^"'{]*)""")
SCRIPT_ID = re.compile(r"""\.id\s*=\s*["']([A-Za-z][\w-]*)["']""")
SCRIPT_CLASS = re.compile(r"""\.(?:className\s*=|classList\.(?:add|toggle)\()\s*["']([^"']+)["']""")
SELECTOR = re.compile(r"""(?<![\w$])([#.])([A-Za-z][\w-]*)""")
HTMX_SELECTOR = re.compile(
    r"""\b(?:hx-target|hx-select|hx-include|hx-indicator)=["']([^"']*)["']|\bfrom:(\S+)"""
)
JS_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\\\"'])//[^\n]*", re.S)
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
TEMPLATE_COMMENT = re.compile(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}", re.S)
STRING = re.compile(r"""(["'`])((?:\\.|(?!\1).)*)\1""")


def files(*suffixes: str) -> Iterator[Path]:
    for package in PLUGIN:
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix in suffixes and "migrations" not in path.parts:
                yield path


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def python_strings(path: Path) -> Iterator[str]:
    """The string constants of a module, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # A module's, class's or function's docstring, and an attribute's (the string
            # after an assignment).
            for first, second in zip([None, *body], body, strict=False):
                is_doc = first is None or isinstance(first, ast.Assign | ast.AnnAssign)
                if is_doc and isinstance(second, ast.Expr):
                    docstrings.add(id(second.value))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


def code_of(path: Path) -> str:
    """A template's or script's text without its comments."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".js":
        return JS_COMMENT.sub("", text)
    if path.suffix == ".css":
        return CSS_COMMENT.sub("", text)
    return TEMPLATE_COMMENT.sub("", text)


def defined(paths: Iterator[Path]) -> tuple[set[str], set[str]]:
    """The ids and classes the templates and scripts at ``paths`` put in a page."""
    ids: set[str] = set()
    classes: set[str] = set()
    for path in paths:
        text = code_of(path)
        ids.update(ID_ATTRIBUTE.findall(text) + SCRIPT_ID.findall(text))
        for found in CLASS_ATTRIBUTE.findall(text) + SCRIPT_CLASS.findall(text):
            classes.update(found.split())
    return ids, classes


def host_only() -> tuple[set[str], set[str]]:
    host_ids, host_classes = defined(
        p for p in [*HOST_TEMPLATES.rglob("*.html"), *HOST_STATIC.glob("*.js")]
    )
    own_ids, own_classes = defined(files(".html", ".js"))
    return host_ids - own_ids, host_classes - own_classes


def selectors(path: Path) -> Iterator[str]:
    """The selectors a plugin file uses: a script's strings, a style sheet's text, a
    template's htmx selectors."""
    text = code_of(path)
    if path.suffix == ".js":
        yield from (match[1] for match in STRING.findall(text))
    elif path.suffix == ".css":
        yield text
    else:
        for attribute, trigger in HTMX_SELECTOR.findall(text):
            yield attribute or trigger


def test_the_plugin_names_no_host_module_app_or_url() -> None:
    found: set[tuple[str, str]] = set()
    for path in files(".py"):
        for text in python_strings(path):
            found.update((relative(path), m.group(0).rstrip(".")) for m in _names(text))
    for path in files(".html", ".js"):
        found.update((relative(path), m.group(0)) for m in _names(code_of(path)))
    assert found == set()


def _names(text: str) -> Iterator[re.Match[str]]:
    return HOST_NAME.finditer(text)


def test_the_plugin_selects_no_host_id_or_class() -> None:
    ids, classes = host_only()
    assert ids and classes  # the host's pages were read
    found: set[tuple[str, str]] = set()
    for path in files(".js", ".css", ".html"):
        for selector in selectors(path):
            for sign, name in SELECTOR.findall(selector):
                if name in (ids if sign == "#" else classes):
                    found.add((relative(path), sign + name))
    assert found == set()


def test_the_fence_sees_a_host_name() -> None:
    """The scan finds what it is for: a URL name, a module path, a host id in a script."""
    assert [m.group(0) for m in _names("reverse('chat:session'); 'host.models'")] == [
        "chat:session",
        "host.models",
    ]
    ids, _classes = host_only()
    assert "session-list" in ids
    assert ("#", "session-list") in SELECTOR.findall('#session-list .session-row[data-x="1"]')
