"""The follower knows no domain: what a snapshot, a baseline, an event's fragments and a user's
language hold comes from the apps named in ``FOLLOWER_SOURCES`` (docs/design.md, The
follower's seam)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Value
from django.template import Context, Template
from django.template.loader import get_template
from django.test import RequestFactory, override_settings

from follower import sources
from follower.events import events_after
from follower.fragments import language_of
from follower.middleware import FollowerBaselineMiddleware
from follower.snapshot import snapshot
from follower.sources import Payload, Renders, Source

pytestmark = pytest.mark.django_db


class Planets(Source):
    """A source of another domain than sessions: it adds what a test can recognise."""

    kinds = {"orbit": Renders(), "lost": Renders(), "visit": Renders(row_of="planet")}
    columns = {"mass": Value(1)}

    def snapshot(self, user_id: int, into: Payload) -> None:
        into["planets"] = [f"planet of {user_id}"]

    def baseline(self, view_kwargs: Mapping[str, Any]) -> Payload:
        return {"orbit": view_kwargs.get("planet_id")}

    def language(self, user_id: int) -> str | None:
        return "zh-hans"

    def row(self, key: str) -> Payload | None:
        if not key.startswith("p"):
            return None
        return {"owner": 1, "session": {"id": key}, "row_html": f"<li>{key}</li>"}

    def owner(self, key: str) -> int | None:
        return self.owners.get(key)

    owners: dict[str, int] = {}
    """Who owns which planet (set by a test)."""

    def render(self, kind: str, payload: Payload) -> Payload | None:
        if kind == "lost":
            return None
        mine = {"session": None, "html": f"<i>{payload['moon']}</i>", "unless": None}
        return payload | {"fragments": [*payload.get("fragments", []), mine]}


class Broken(Source):
    """A source whose render fails (a template error, say)."""

    kinds = {"broken": Renders()}

    def render(self, kind: str, payload: Payload) -> Payload | None:
        raise ValueError("no such template")


class Moons(Source):
    """A second source with only some of the hooks: the others add nothing. It adds to the
    planets' ``orbit``."""

    adds = {"orbit": ("moon.html",)}
    columns = {"tilt": Value(2)}

    def snapshot(self, user_id: int, into: Payload) -> None:
        into["moons"] = len(into["planets"])

    def render(self, kind: str, payload: Payload) -> Payload | None:
        return payload | {"moons": len(payload["fragments"])}


class Rival(Source):
    """A source that declares a kind another source declares already."""

    kinds = {"orbit": Renders()}


PLANETS = f"{__name__}.Planets"
MOONS = f"{__name__}.Moons"
BROKEN = f"{__name__}.Broken"
RIVAL = f"{__name__}.Rival"


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
        [host] = sources.sources()
        assert host.row_columns == {}


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


def test_each_kind_is_rendered_by_its_source_then_by_those_that_add_to_it(django_user_model):
    ada = django_user_model.objects.create_user("ada")
    with override_settings(FOLLOWER_SOURCES=[MOONS, PLANETS]):
        assert [set(source.row_columns) for source in sources.sources()] == [{"mass", "tilt"}] * 2
        sources.publish(ada.pk, "orbit", {"moon": "Io", "fragments": [{"html": "mine"}]})
        sources.publish(ada.pk, "lost", {"moon": "Io"})
        sources.publish(ada.pk, "spin", {"moon": "Io"})
        # Rendered when numbered, after the commit: what a source drops is never numbered.
        orbit, spin = events_after(ada.pk, 0)  # type: ignore[misc]
    assert [f["html"] for f in orbit["payload"]["fragments"]] == ["mine", "<i>Io</i>"]
    assert orbit["payload"]["moons"] == 2  # the moons added after the planets rendered
    assert (spin["id"], spin["payload"]) == (2, {"moon": "Io"})  # a kind no source declares


def test_an_event_that_names_a_row_carries_it_or_is_dropped(django_user_model):
    ada = django_user_model.objects.create_user("ada")
    with override_settings(FOLLOWER_SOURCES=[PLANETS]):
        sources.publish(ada.pk, "visit", {"planet": "p4", "moon": "Io"})
        sources.publish(ada.pk, "visit", {"planet": "q4", "moon": "Io"})
        [visit] = events_after(ada.pk, 0)  # type: ignore[misc]
    assert visit["payload"]["session"] == {"id": "p4"}
    assert visit["payload"]["row_html"] == "<li>p4</li>"


def test_an_event_about_an_item_reaches_its_owner(django_user_model, monkeypatch):
    ada = django_user_model.objects.create_user("ada")
    monkeypatch.setattr(Planets, "owners", {"p4": ada.pk})
    with override_settings(FOLLOWER_SOURCES=[PLANETS]):
        assert sources.publish_about("p4", "orbit", {"moon": "Io"})
        assert not sources.publish_about("p5", "orbit", {"moon": "Io"})
        [orbit] = events_after(ada.pk, 0)  # type: ignore[misc]
    assert orbit["payload"]["moon"] == "Io"


def test_an_event_that_cannot_be_rendered_holds_back_none_after_it(django_user_model, caplog):
    ada = django_user_model.objects.create_user("ada")
    with override_settings(FOLLOWER_SOURCES=[BROKEN]):
        sources.publish(ada.pk, "broken", {})
        sources.publish(ada.pk, "spin", {"moon": "Io"})
        [spin] = events_after(ada.pk, 0)  # type: ignore[misc]
    assert (spin["id"], spin["kind"]) == (1, "spin")
    assert "not rendered" in caplog.text


def test_a_source_path_that_names_nothing_is_refused():
    with (
        override_settings(FOLLOWER_SOURCES=["follower.no_such_source"]),
        pytest.raises(ImportError),
    ):
        sources.sources()


@pytest.mark.parametrize("paths", [["follower.events.publish"], [PLANETS, RIVAL]])
def test_a_source_that_is_no_source_or_declares_anothers_kind_is_refused(paths):
    with override_settings(FOLLOWER_SOURCES=paths), pytest.raises(ImproperlyConfigured):
        sources.sources()


def test_every_template_a_source_declares_exists():
    """The templates ``kinds`` and ``adds`` name are what the events carry, rendered after the
    commit: this host's and the handoff's."""
    for source in sources.sources():
        named = [t for renders in source.kinds.values() for t in renders.templates]
        for template in [*named, *(t for ts in source.adds.values() for t in ts)]:
            get_template(template)


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


def test_the_language_is_read_for_a_batch_only_when_it_renders_a_template(
    django_user_model, monkeypatch
):
    ada = django_user_model.objects.create_user("ada")
    asked: list[int] = []
    monkeypatch.setattr(Planets, "language", lambda self, user_id: asked.append(user_id))
    with override_settings(FOLLOWER_SOURCES=[PLANETS]):
        sources.publish(ada.pk, "orbit", {"moon": "Io"})
        events_after(ada.pk, 0)
        assert asked == []  # the planets' orbit names no template
    with override_settings(FOLLOWER_SOURCES=[MOONS, PLANETS]):
        sources.publish(ada.pk, "orbit", {"moon": "Io"})
        sources.publish(ada.pk, "orbit", {"moon": "Europa"})
        events_after(ada.pk, 1)
        assert asked == [ada.pk]  # the moons add a template: read once for the batch
