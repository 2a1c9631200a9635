"""Every write of a handoff record, a main state or a redirect goes through ``handoff.store``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import transaction
from handoff_support import make_source

from handoff import store
from handoff.models import MainState
from handoff.signals import main_switched

pytestmark = pytest.mark.django_db

HANDOFF = Path(__file__).resolve().parents[2] / "handoff"
STATE_MODELS = {"HandoffRecord", "MainState", "Redirect"}
WRITES = {"create", "update", "delete", "get_or_create", "update_or_create", "bulk_create"}
WRITES |= {"bulk_update", "save"}
# ``store`` is where they are written; the settings store writes the settings row only.
ALLOWED = {"store.py", "settings_store.py"}


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _writes(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method = node.func.attr
        if method in {"save", "delete"} or (
            method in WRITES and _root(node.func.value) in STATE_MODELS
        ):
            found.append(f"{path.name}:{node.lineno} .{method}()")
    return found


def test_no_module_but_the_store_writes_records_main_states_or_redirects():
    modules = [p for p in HANDOFF.rglob("*.py") if "migrations" not in p.parts]
    assert [w for p in modules if p.name not in ALLOWED for w in _writes(p)] == []


@pytest.fixture
def announced() -> Iterator[list[bool]]:
    """The ``enabled`` of every ``main_switched`` sent during the test."""
    heard: list[bool] = []

    def receiver(enabled: bool, **kwargs: object) -> None:
        heard.append(enabled)

    main_switched.connect(receiver)
    yield heard
    main_switched.disconnect(receiver)


def test_hand_over_clears_the_source_and_gives_the_successor_its_switch(announced):
    source, successor = make_source(), make_source(title="successor")
    store.update_main_state(source.pk, enabled=True, requested=True, deferred=["turn"], failures=2)
    announced.clear()
    with transaction.atomic():
        new = store.hand_over(store.lock_main_state(source.pk), successor.pk)
    old = MainState.objects.get(session=source)
    assert (old.enabled, old.requested, old.deferred, old.failures, old.retry_at) == (
        False, False, [], 0, None,
    )  # fmt: skip
    assert (new.session_id, new.enabled, new.inherited_from_id) == (successor.pk, True, source.pk)
    assert announced == []  # the route's redirect says the source is a relay


@pytest.mark.parametrize("review", [True, False, None])
def test_the_successor_keeps_the_sources_review_choice(review: bool | None):
    source, successor = make_source(), make_source(title="successor")
    store.update_main_state(source.pk, review=review)
    with transaction.atomic():
        new = store.hand_over(store.lock_main_state(source.pk), successor.pk)
    assert MainState.objects.get(pk=new.pk).review is review


def test_save_main_state_announces_a_switch_and_refuses_an_unknown_field(announced):
    source = make_source()
    with transaction.atomic():
        store.save_main_state(store.lock_main_state(source.pk), enabled=True)
    assert announced == [True]
    with pytest.raises(ValueError), transaction.atomic():
        store.save_main_state(store.lock_main_state(source.pk), colour="red")
    assert MainState.objects.get(session=source).enabled is True
