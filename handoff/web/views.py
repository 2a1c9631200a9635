"""The conversation page's handoff panel (issue 3, §2): shown, polled, and acted on.

The panel's switch and "Hand off now" act on the signed-in user's own session (anyone else's is
a 404).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from handoff import operations
from handoff.exceptions import HandoffError, SessionNotFound
from handoff.operations import Action
from handoff.web.panel import session_panel, title_hint

# What the panel's buttons post (reading the status is the panel itself).
SESSION_ACTIONS = frozenset({Action.ENABLE, Action.DISABLE, Action.NOW})


def _owned_session(request: HttpRequest, session_id: UUID) -> Any:
    """Return the signed-in user's session; 404 for a missing one and anyone else's alike."""
    try:
        return operations.owned_session(session_id, request.user.pk)
    except SessionNotFound as exc:
        raise Http404(str(exc)) from exc


def _panel_response(
    request: HttpRequest, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """Render the panel and, out of band, the title's hint; ask the page to refresh its sidebar
    when the attempt's phase moved (``?phase=`` is the phase the page showed) or the user
    acted."""
    response = render(request, "chat/handoff_panel.html", context, status=status)
    hint = {"hint": title_hint(context["session"]), "oob": True}
    response.write(render_to_string("chat/_conv_hint.html", hint, request))
    last = (context.get("report") or {}).get("last") or {}
    if request.method == "POST" or request.GET.get("phase", "") != last.get("phase", ""):
        trigger_client_event(response, "sidebar:refresh")
    return response


@require_GET
def panel(request: HttpRequest, session_id: UUID) -> HttpResponse:
    """The handoff panel of one of the user's sessions (polled while an attempt runs)."""
    session = _owned_session(request, session_id)
    return _panel_response(request, session_panel(session))


@require_POST
def session_action(request: HttpRequest, session_id: UUID, action: str) -> HttpResponse:
    """Enable or disable the session's automatic handoff, or ask for one now; show the panel.

    ``now`` only requests the attempt (it runs in the background). A refusal (a subagent, a
    missing service) is shown in the panel with status 409; nothing changed then.
    """
    session = _owned_session(request, session_id)
    if action not in SESSION_ACTIONS:
        raise Http404(f"No action {action!r}.")
    try:
        operations.act(action, session.pk)
    except HandoffError as exc:
        context = session_panel(session) | {"action_error": str(exc)}
        return _panel_response(request, context, status=409)
    return _panel_response(request, session_panel(session))
