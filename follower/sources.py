"""The apps that feed the follower, named in ``settings.FOLLOWER_SOURCES``.

The follower knows no domain (docs/design.md, The follower's seam): it numbers, stores and
delivers events (``follower.events``, ``follower.hub``). What becomes an event, what a page's
snapshot and baseline hold, and which language a user's fragments are rendered in come from the
apps, each through one *source*: an object named by its dotted path in ``FOLLOWER_SOURCES`` (a
class is instantiated with the follower's ``Outlet``, what it publishes and renders with), in
order. This host's:
``host.follow.SessionSource`` (a session's row, a new log line) and
``handoff.web.follow.HandoffSource`` (records, redirects, switches, settings).

A source has any of these methods (a missing one contributes nothing):

- ``connect() -> None``: connect the app's receivers, which publish through the outlet (called
  once, from ``FollowerConfig.ready``; connect them strongly, ``weak=False``, since the source
  is made anew when the setting changes);
- ``snapshot(user_id: int, snapshot: dict) -> None``: add the app's keys to the user's
  snapshot (``{"last_event_id": int}`` to start with), inside the snapshot's transaction;
- ``columns() -> dict[str, Expression]``: columns the app adds to the rows another source
  reads, as ORM expressions by name (the handoff's ``redirect_to`` on the host's session rows,
  read in the same query); a source that reads rows applies ``Outlet.columns``;
- ``row(key: str) -> dict | None``: the page's list item for ``key`` as the owning app renders
  it, ``{"owner": int, ...payload keys}`` (None: no such item), for another app's events;
- ``owner(key: str) -> int | None``: the user whose pages show item ``key`` (a session's
  owner; None: not known), for another app's events about it (``Outlet.owner``);
- ``render(kind: str, payload: dict) -> dict | None``: the payload a page gets for an event of
  ``kind`` stored with ``payload`` (what the writer published: the kind's ids and the facts it
  had in hand), completed from what is stored now (rows, ``row_html``, ``fragments``); the
  payload unchanged for a kind the app neither owns nor adds to; None when what the event is
  about is gone (the event is dropped). Called after the writer's commit, when the event is
  numbered (``render``: every source in order, each given the previous one's payload, so an
  app adds to another's event: the handoff's meter on the host's ``session.entry``); the
  reads marked ``common.reads.once`` and the user's language are read once per batch;
- ``baseline(view_kwargs: dict) -> dict``: what the app adds to a page's baseline, read
  before the view (``follower.middleware``);
- ``language(user_id: int) -> str | None``: the language the user chose (None: not known);
- ``scripts``: static paths of the app's scripts, loaded on every page after the follower's
  transport (``{% follower_scripts %}``) and using its ``window.follower`` object and events.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from follower import events, fragments


@functools.cache
def sources() -> tuple[Any, ...]:
    """Return the sources named in ``FOLLOWER_SOURCES`` (default: none), in order.

    Raises ``ImportError`` for a path that names nothing.
    """
    found = []
    for path in getattr(settings, "FOLLOWER_SOURCES", ()):
        source = import_string(path)
        found.append(source(Outlet()) if isinstance(source, type) else source)
    return tuple(found)


@receiver(setting_changed)
def _forget(setting: str, **kwargs: Any) -> None:
    if setting == "FOLLOWER_SOURCES":
        sources.cache_clear()


def hooks(name: str) -> Iterator[Any]:
    """Yield each source's method ``name``, skipping the sources without it."""
    for source in sources():
        method = getattr(source, name, None)
        if method is not None:
            yield method


def render(kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Return the payload of an event of ``kind`` stored with ``payload`` as every source's
    ``render`` completes it, in order (None: a source dropped it). ``payload`` is not changed."""
    completed: dict[str, Any] | None = dict(payload)
    for method in hooks("render"):
        completed = method(kind, completed)
        if completed is None:
            return None
    return completed


def language(user_id: int) -> str | None:
    """Return the first language a source knows for ``user_id`` (None: none does)."""
    for method in hooks("language"):
        found: str | None = method(user_id)
        if found:
            return found
    return None


class Outlet:
    """What a source publishes and renders with (given to its class): the follower's own
    functions. ``fragment`` and ``render`` are for a source's ``render`` hook (after commit)."""

    @staticmethod
    def publish(user_id: int, kind: str, payload: dict[str, Any]) -> None:
        """``follower.events.publish``: store the event in the writer's transaction with
        ``payload`` as given (ids and facts in hand, JSON), rendered after the commit by the
        sources' ``render``."""
        events.publish(user_id, kind, payload)

    fragment = staticmethod(fragments.fragment)
    """``follower.fragments.fragment``: one fragment, rendered in the user's language."""
    render = staticmethod(fragments.render)
    """``follower.fragments.render``: a template rendered in the user's language."""

    @staticmethod
    def columns() -> dict[str, Any]:
        """Return every source's ``columns()``, merged: ``{name: ORM expression}``."""
        merged: dict[str, Any] = {}
        for method in hooks("columns"):
            merged |= method()
        return merged

    @staticmethod
    def owner(key: str) -> int | None:
        """Return the first source's ``owner(key)`` that is not None (None: no source knows)."""
        for method in hooks("owner"):
            found: int | None = method(key)
            if found is not None:
                return found
        return None

    @staticmethod
    def row(key: str) -> dict[str, Any] | None:
        """Return the first source's ``row(key)`` that is not None (None: no source has it)."""
        for method in hooks("row"):
            found: dict[str, Any] | None = method(key)
            if found is not None:
                return found
        return None


def connect() -> None:
    """Call every source's ``connect`` (``FollowerConfig.ready``)."""
    for method in hooks("connect"):
        method()


def snapshot(user_id: int, into: dict[str, Any]) -> None:
    """Let every source add its keys to ``into``, the snapshot of ``user_id``."""
    for method in hooks("snapshot"):
        method(user_id, into)


def baseline(view_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Return what the sources add to a page's baseline for a view called with ``view_kwargs``."""
    merged: dict[str, Any] = {}
    for method in hooks("baseline"):
        merged |= method(view_kwargs)
    return merged
