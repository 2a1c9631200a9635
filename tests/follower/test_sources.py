"""The follower knows no domain: what a snapshot, a baseline, an event's fragments and a user's
language hold comes from the apps named in ``FOLLOWER_SOURCES`` (docs/design.md, The
follower's seam)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Value
from django.template import Context, Template
from django.test import RequestFactory, override_settings

from follower import sources
from follower.events import events_after
from follower.fragments import language_of
from follower.middleware import FollowerBaselineMiddleware
from follower.snapshot import snapshot

pytestmark = pytest.mark.django_db


class Planets:
    """A source of another domain than sessions: it adds what a test can recognise."""

    def snapshot(self, user_id: int, into: dict[str, Any]) -> None:
        into["planets"] = [f"planet of {user_id}"]

    def baseline(self, view_kwargs: dict[str, Any]) -> dict[str, Any]:
        return {"orbit": view_kwargs.get("planet_id")}

    def language(self, user_id: int) -> str | None:
        return "zh-hans"

    def columns(self) -> dict[str, Any]:
        return {"mass": Value(1)}

    def row(self, key: str) -> dict[str, Any] | None:
        return {"owner": 1, "planet": key} if key.startswith("p") else None

    def render(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        if kind == "lost":
            return None
        if kind != "orbit":
            return payload
        mine = {"session": None, "html": f"<i>{payload['moon']}</i>", "unless": None}
        return payload | {"fragments": [*payload.get("fragments", []), mine]}


class Broken:
    """A source whose render fails for one kind (a template error, say)."""

    def render(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        if kind == "broken":
            raise ValueError("no such template")
        return payload


class Moons:
    """A second source with only some of the methods: the missing ones add nothing."""

    def snapshot(self, user_id: int, into: dict[str, Any]) -> None:
        into["moons"] = len(into["planets"])

    def columns(self) -> dict[str, Any]:
        return {"tilt": Value(2)}


planets, moons, broken = Planets(), Moons(), Broken()
PLANETS = f"{__name__}.planets"
MOONS = f"{__name__}.moons"
BROKEN = f"{__name__}.broken"


def test_without_sources_the_snapshot_has_only_the_event_id(django_user_model):
    ada = django_user_model.objects.create_user("ada")
    with override_settings(FOLLOWER_SOURCES=[]):
        assert snapshot(ada.pk) == {"last_event_id": 0}


def test_the_snapshot_holds_what_each_source_adds_in_order(django_user_model):
    ada = django_user_model.objects.create_user("ada")
    with override_settings(FOLLOWER_SOURCES=[PLANETS, MOONS]):
        assert snapshot(ada.pk) == {
            "last_event_id": 0,
            "planets": [f"planet of {ada.pk}"],
            "moons": 1,
        }


def test_this_hosts_snapshot_comes_from_the_host_and_the_handoff(django_user_model):
    """The default sources: the host's session rows with the handoff's ``redirect_to``."""
    ada = django_user_model.objects.create_user("ada")
    assert snapshot(ada.pk) == {"last_event_id": 0, "sessions": []}
    with override_settings(FOLLOWER_SOURCES=["host.follow.SessionSource"]):
        assert sources.Outlet.columns() == {}


def test_the_page_baseline_holds_what_the_sources_add(django_user_model):
    request = RequestFactory().get("/planets/p1/")
    request.user = django_user_model.objects.create_user("ada")
    middleware = FollowerBaselineMiddleware(lambda request: None)  # type: ignore[arg-type,return-value]
    with override_settings(FOLLOWER_SOURCES=[PLANETS]):
        middleware.process_view(request, lambda: None, (), {"planet_id": "p1"})
    assert request.follower_baseline == {"event_id": 0, "orbit": "p1"}  # type: ignore[attr-defined]


def test_fragments_are_rendered_in_the_language_a_source_knows(django_user_model, settings):
    ada = django_user_model.objects.create_user("ada")
    settings.LANGUAGE_CODE = "en"
    with override_settings(FOLLOWER_SOURCES=[MOONS]):
        assert language_of(ada.pk) == "en"
    with override_settings(FOLLOWER_SOURCES=[MOONS, PLANETS]):
        assert language_of(ada.pk) == "zh-hans"


def test_the_outlet_merges_the_sources_columns_rows_and_fragments(django_user_model):
    ada = django_user_model.objects.create_user("ada")
    outlet = sources.Outlet()
    with override_settings(FOLLOWER_SOURCES=[MOONS, PLANETS]):
        assert set(outlet.columns()) == {"mass", "tilt"}
        assert outlet.row("p4") == {"owner": 1, "planet": "p4"}
        assert outlet.row("q4") is None
        outlet.publish(ada.pk, "orbit", {"moon": "Io", "fragments": [{"html": "mine"}]})
        outlet.publish(ada.pk, "lost", {"moon": "Io"})
        outlet.publish(ada.pk, "spin", {"moon": "Io"})
        # Rendered when numbered, after the commit: what a source drops is never numbered.
        orbit, spin = events_after(ada.pk, 0)  # type: ignore[misc]
    assert [f["html"] for f in orbit["payload"]["fragments"]] == ["mine", "<i>Io</i>"]
    assert (spin["id"], spin["payload"]) == (2, {"moon": "Io"})


def test_an_event_that_cannot_be_rendered_holds_back_none_after_it(django_user_model, caplog):
    ada = django_user_model.objects.create_user("ada")
    outlet = sources.Outlet()
    with override_settings(FOLLOWER_SOURCES=[BROKEN]):
        outlet.publish(ada.pk, "broken", {})
        outlet.publish(ada.pk, "spin", {"moon": "Io"})
        [spin] = events_after(ada.pk, 0)  # type: ignore[misc]
    assert (spin["id"], spin["kind"]) == (1, "spin")
    assert "not rendered" in caplog.text


def test_a_source_path_that_names_nothing_is_refused():
    with (
        override_settings(FOLLOWER_SOURCES=["follower.no_such_source"]),
        pytest.raises(ImportError),
    ):
        sources.sources()


def scripts() -> list[str]:
    html = Template("{% load follower_scripts %}{% follower_scripts %}").render(Context())
    return [line.split('"')[1] for line in html.split("\n")]


def test_pages_load_the_transport_then_the_sources_scripts():
    """The session list and the followed folders' switches are the host's scripts and the jump
    rules the handoff's, all run over the follower's transport, in ``FOLLOWER_SOURCES`` order."""
    assert scripts() == [
        "/static/follower/follower.js",
        "/static/chat-rows.js",
        "/static/followed-folders.js",
        "/static/handoff/jump.js",
    ]
    with override_settings(FOLLOWER_SOURCES=[MOONS]):
        assert scripts() == ["/static/follower/follower.js"]
