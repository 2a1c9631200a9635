"""Signals the handoff app sends when what a page shows of a handoff changes (the follower listens).

Sent explicitly by the store's writers, inside their transaction, so a receiver's writes commit
or roll back with the change:

- ``record_changed(sender=HandoffRecord, record=HandoffRecord)``: a record was created, moved
  phase or got its successor (docs/spec.md, State).
- ``redirects_changed(sender=Redirect, changes=list[RouteChange])``: redirects were added,
  re-pointed (the map stays flat; docs/spec.md, Forwarding and cycles) or removed.
- ``settings_changed(sender=HandoffSettings, values=SettingsValues)``: the global settings were
  saved (the switch, a threshold, the token basis, the context windows).
- ``main_switched(sender=MainState, session_id=SessionId, enabled=bool)``: a main's own
  automatic-handoff switch or its review switch changed (``enabled``: the former, as it is now).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.dispatch import Signal

from handoff.session_model import SessionId

record_changed = Signal()
redirects_changed = Signal()
settings_changed = Signal()
main_switched = Signal()


@dataclass(frozen=True)
class RouteChange:
    """``source`` now leads to ``destination`` (None: removed); it led to ``previous`` before.

    ``source_title`` is the source's title as it was before the route renamed it (archived
    in name only, ``· 接续xxxxxx``), the name its pages knew it by; None when the
    writer did not give it (a re-pointed or removed entry, whose source this route did not
    rename).
    """

    source: SessionId
    destination: SessionId | None
    previous: SessionId | None
    source_title: str | None = None
