"""The apps that feed the follower, named in ``settings.FOLLOWER_SOURCES`` (docs/design.md, The
life of one handoff's events).

The follower knows no domain (docs/design.md, The follower's seam): it numbers, stores and
delivers events (``follower.events``, ``follower.hub``). What becomes an event, how it is
rendered, what a page's snapshot and baseline hold, and which language a user's fragments are
rendered in come from the apps, each through one ``Source``: a subclass named by its dotted path
in ``FOLLOWER_SOURCES``, made once with every source's ``columns``. This host's:
``host.follow.SessionSource`` (a session's row, a new log line) and
``handoff.web.follow.HandoffSource`` (records, redirects, switches, settings).

An event goes one way. Its app's source publishes it inside the writer's transaction
(``publish``, ``publish_about``: what identifies the change, JSON); ``follower.events`` stores it
and, after the commit, has it rendered here (``render``): by the one source that declares its
kind (``Source.kinds``), then by the sources that declare they add to it (``Source.adds``),
then with the row of the session it names (``Renders.row_of``: the row source's ``row``), all
in the receiving user's language, set around the renders; then it numbers and sends it. A
source's render returns data and calls no other source: what one app adds to another's event
is declared, and the follower puts the parts together.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from follower import events
from follower.conf import follower_settings

Payload = dict[str, Any]
"""An event's payload: JSON as stored, the page's keys once rendered."""


@dataclass(frozen=True)
class Renders:
    """What a source's ``render`` puts in the payload of one kind of event it publishes."""

    templates: tuple[str, ...] = ()
    """The templates of what it renders into the payload (``fragments``, ``row_html``), in the
    order the payload carries them; empty: the payload is complete as published (and a batch of
    such events reads no language: ``renders_html``)."""
    row_of: str | None = None
    """The payload key naming the session whose row the event carries: after the renders the
    follower adds ``session`` and ``row_html`` from the row source (``Source.row``) and drops
    the event when no source has that row; None: no row."""


class Source:
    """One app's part of the follower. Each hook's default contributes nothing; a source
    overrides those it needs, and declares in ``kinds`` and ``adds`` every event it renders."""

    kinds: ClassVar[Mapping[str, Renders]] = {}
    """The kinds of event this source publishes, each with what its ``render`` adds; a kind
    belongs to one source (two sources declaring it: ``ImproperlyConfigured``)."""
    adds: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Another source's kinds whose payload this source's ``render`` adds to, with the templates
    of the fragments it appends (the handoff's context meter on the host's ``session.entry``);
    called after the kind's own source, in ``FOLLOWER_SOURCES`` order."""
    columns: ClassVar[Mapping[str, Any]] = {}
    """Columns the app adds to the rows a source reads, as ORM expressions by name (the
    handoff's ``redirect_to`` on the host's session rows, read in the same query)."""
    scripts: ClassVar[tuple[str, ...]] = ()
    """Static paths of the app's scripts, loaded on every page after the follower's transport
    (``{% follower_scripts %}``) and using its ``window.follower`` object and events."""

    def __init__(self, row_columns: Mapping[str, Any]) -> None:
        self.row_columns = dict(row_columns)
        """Every source's ``columns``, merged: what a source that reads rows annotates them
        with."""

    def connect(self) -> None:
        """Connect the app's receivers, which publish (called once, from
        ``FollowerConfig.ready``; connect them strongly, ``weak=False``, since the source is
        made anew when the setting changes)."""

    def render(self, kind: str, payload: Payload) -> Payload | None:
        """Return the payload a page gets for an event of ``kind`` (one of ``kinds`` or
        ``adds``) stored with ``payload`` (what the writer published, or what the kind's own
        source rendered of it), completed from what is stored now with what ``kinds`` or
        ``adds`` names; None when what the event is about is gone (the event is dropped).
        Called after the writer's commit, in the user's language; the reads marked
        ``common.reads.once`` are read once per batch."""
        return payload

    def row(self, key: str) -> Payload | None:
        """Return ``{"owner": int, "session": row, "row_html": str, ...}``, the page's list item
        for ``key`` as stored now (None: no such item), for the events that carry a row
        (``Renders.row_of``)."""
        return None

    def owner(self, key: str) -> int | None:
        """Return the user whose pages show item ``key`` (None: not known), for
        ``publish_about``."""
        return None

    def snapshot(self, user_id: int, into: Payload) -> None:
        """Add the app's keys to ``into``, the snapshot of ``user_id``
        (``{"last_event_id": int}`` to start with), inside the snapshot's transaction."""

    def baseline(self, view_kwargs: Mapping[str, Any]) -> Payload:
        """Return what the app adds to a page's baseline, read before the view
        (``follower.middleware``)."""
        return {}

    def language(self, user_id: int) -> str | None:
        """Return the language the user chose (None: not known)."""
        return None


@dataclass(frozen=True)
class Loaded:
    """The sources of ``FOLLOWER_SOURCES``, in order, and which of them render each kind."""

    sources: tuple[Source, ...]
    owners: Mapping[str, Source]
    """The source of each kind (``Source.kinds``)."""
    adders: Mapping[str, tuple[Source, ...]]
    """The sources that add to each kind (``Source.adds``), in order."""


@functools.cache
def loaded() -> Loaded:
    """Make the sources named in ``FOLLOWER_SOURCES`` (default: none), in order.

    Raises ``ImportError`` for a path that names nothing and ``ImproperlyConfigured`` for one
    that names no ``Source`` subclass or for a kind two sources declare.
    """
    classes = []
    for path in follower_settings().sources:
        found = import_string(path)
        if not (isinstance(found, type) and issubclass(found, Source)):
            raise ImproperlyConfigured(f"FOLLOWER_SOURCES: {path} is no follower.sources.Source")
        classes.append(found)
    merged: dict[str, Any] = {}
    for source_class in classes:
        merged |= source_class.columns
    made = tuple(source_class(merged) for source_class in classes)
    owners: dict[str, Source] = {}
    adders: dict[str, tuple[Source, ...]] = {}
    for source in made:
        for kind in source.kinds:
            if kind in owners:
                raise ImproperlyConfigured(f"FOLLOWER_SOURCES: two sources declare {kind!r}")
            owners[kind] = source
        for kind in source.adds:
            adders[kind] = (*adders.get(kind, ()), source)
    return Loaded(made, owners, adders)


def sources() -> tuple[Source, ...]:
    """Return the sources named in ``FOLLOWER_SOURCES``, in order (``loaded``)."""
    return loaded().sources


@receiver(setting_changed)
def _forget(setting: str, **kwargs: Any) -> None:
    if setting == "FOLLOWER_SOURCES":
        loaded.cache_clear()


def publish(user_id: int, kind: str, payload: Payload) -> None:
    """Store an event of ``kind`` for ``user_id`` in the writer's transaction with ``payload``
    as given (ids and facts in hand, JSON); it is rendered (``render``), numbered and sent after
    the commit (``follower.events.publish``)."""
    events.publish(user_id, kind, payload)


def publish_about(key: str, kind: str, payload: Payload) -> bool:
    """``publish`` for the user whose pages show item ``key`` (the first source's ``owner``
    that knows it); return whether one did (False: nothing is stored)."""
    user_id = owner(key)
    if user_id is None:
        return False
    publish(user_id, kind, payload)
    return True


def render(kind: str, payload: Payload) -> Payload | None:
    """Return the payload of an event of ``kind`` stored with ``payload`` as its sources
    complete it: the kind's own source, then the row its ``Renders.row_of`` names, then the
    sources that add to it (None: one of them dropped it). ``payload`` is not changed; a kind
    no source declares passes unchanged. Called after the commit, in the user's language
    (``follower.events``)."""
    found = loaded()
    completed: Payload | None = dict(payload)
    source = found.owners.get(kind)
    if source is not None:
        completed = _with_row(source.render(kind, dict(payload)), source.kinds[kind].row_of)
    for adder in found.adders.get(kind, ()):
        if completed is None:
            return None
        completed = adder.render(kind, completed)
    return completed


def renders_html(kind: str) -> bool:
    """Return whether an event of ``kind`` is rendered with a template: its source's
    ``Renders`` names one or a row, or a source that adds to it names one (``follower.events``
    reads the user's language for a batch only then)."""
    found = loaded()
    source = found.owners.get(kind)
    renders = source.kinds[kind] if source is not None else Renders()
    added = any(adder.adds[kind] for adder in found.adders.get(kind, ()))
    return bool(renders.templates) or renders.row_of is not None or added


def _with_row(payload: Payload | None, row_of: str | None) -> Payload | None:
    """``payload`` with the row of the session its ``row_of`` key names (None: dropped, or no
    source has that row)."""
    if payload is None or row_of is None:
        return payload
    found = row(str(payload[row_of]))
    if found is None:
        return None
    return payload | {"session": found["session"], "row_html": found["row_html"]}


def row(key: str) -> Payload | None:
    """Return the first source's ``row(key)`` that is not None (None: no source has it)."""
    for source in sources():
        found = source.row(key)
        if found is not None:
            return found
    return None


def owner(key: str) -> int | None:
    """Return the first source's ``owner(key)`` that is not None (None: no source knows)."""
    for source in sources():
        found = source.owner(key)
        if found is not None:
            return found
    return None


def language(user_id: int) -> str | None:
    """Return the first language a source knows for ``user_id`` (None: none does)."""
    for source in sources():
        found = source.language(user_id)
        if found:
            return found
    return None


def connect() -> None:
    """Call every source's ``connect`` (``FollowerConfig.ready``)."""
    for source in sources():
        source.connect()


def snapshot(user_id: int, into: Payload) -> None:
    """Let every source add its keys to ``into``, the snapshot of ``user_id``."""
    for source in sources():
        source.snapshot(user_id, into)


def baseline(view_kwargs: Mapping[str, Any]) -> Payload:
    """Return what the sources add to a page's baseline for a view called with ``view_kwargs``."""
    merged: Payload = {}
    for source in sources():
        merged |= source.baseline(view_kwargs)
    return merged
