"""Forwarding (docs/spec.md, Forwarding and cycles): a redirected source is a relay.

``before_step`` is the receiver of the host's ``before_step`` signal. When the session has a
redirect, the incoming messages (already appended to the source's log by the host, so the old
log stays the record of what arrived) are relayed to ``destination()``, the end of the redirect
map, as relay messages under ``relay_id(source, message ids)``; the destination's agent then
answers them. A relay id already in the destination's log is skipped, so a retried forward
adds nothing. The answer is the host's "step rejected": no turn starts in the source.

Peer and subagent reports posted to a handed-off main take the same path, also when the main
was archived since: the reporter reaches the destination, not the original.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext_noop

from handoff import degradation, services, store
from handoff.core.redirects import RedirectCycleError
from handoff.core.relay import relay_id
from handoff.exceptions import ForwardingError
from handoff.services import SessionController

logger = logging.getLogger(__name__)


def destination(session_id: Any) -> str:
    """Return where input for ``session_id`` goes: the end of the redirect map (itself if none).

    Raises ``ForwardingError`` when the stored map holds a cycle (reported, never looped on).
    """
    try:
        return store.redirect_graph(session_id).destination(str(session_id))
    except RedirectCycleError as exc:
        raise ForwardingError(f"cannot forward input of {session_id}: {exc}") from exc


def _controller() -> SessionController:
    return degradation.require(
        services.session_controller(),
        degradation.SESSION_CONTROLLER,
        gettext_noop("input cannot be forwarded"),
    )


def relay(session: Any, incoming: Sequence[Any]) -> tuple[str, str, bool]:
    """Relay ``incoming`` (messages of ``session``) to its destination.

    Returns ``(destination id, relay id, created)``; ``created`` is False when the relay was
    already in the destination (a retry). Each message is appended in order under the one
    relay id of the batch (the first carries it; later ones get ``relay_id:n``). Raises
    ``ForwardingError`` (cycle) and ``ServiceUnavailable`` (no session controller).
    """
    controller = _controller()
    target_id = destination(session.pk)
    rid = relay_id(str(session.pk), [str(m.pk) for m in incoming])
    target = controller.get(target_id)
    if target is None:
        raise ForwardingError(f"the destination {target_id} of {session.pk} does not exist")
    created = False
    for index, message in enumerate(incoming):
        key = rid if index == 0 else _nth(rid, index)
        created |= controller.relay(
            target, role=message.role, content=message.content, relay_id=key
        )
    return target_id, rid, created


def _nth(rid: str, index: int) -> str:
    return relay_id(rid, [str(index)])


def before_step(sender: Any, session: Any, incoming: Sequence[Any], **kwargs: Any) -> Any:
    """``before_step`` receiver: relay input of a redirected session and reject the step.

    Returns ``None`` for a session without a redirect (the host goes on as usual).
    """
    if not incoming or store.redirect_of(session.pk) is None:
        return None
    target_id, rid, created = relay(session, incoming)
    if not created:
        logger.info("relay %s to %s already present; nothing added", rid, target_id)
    return _controller().step_rejected(target_id, rid)
