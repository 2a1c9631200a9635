"""The conversation page's handoff panel: shown, polled, and acted on; and the lineage page of
a conversation's chain (docs/design.md, Lineage).

The panel's switches and "Hand off now" act on the signed-in user's own session (anyone else's
is a 404); so do the review form (edit, commit or discard the brief of a
handoff waiting for review) and the lineage page.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import (
    conditional_page,
    require_GET,
    require_http_methods,
    require_POST,
)
from django_htmx.http import reswap, trigger_client_event

from handoff import operations, review
from handoff.exceptions import HandoffError, InvalidBrief, NoReviewWaiting, SessionNotFound
from handoff.lineage.page import hops, neighbours
from handoff.operations import Action
from handoff.refusals import refusal_text
from handoff.session_model import SessionId
from handoff.web.host_pages import base_template
from handoff.web.panel import hint_context, session_panel, terminal_way
from handoff.web.review_form import BriefReview

# What the panel's buttons post (reading the status is the panel itself).
SESSION_ACTIONS = frozenset(
    {Action.ENABLE, Action.DISABLE, Action.NOW, Action.REVIEW_ON, Action.REVIEW_OFF}
)

DISCARDED = _("Discarded at review: no successor starts, and this conversation continues here.")


def _owned_session(request: HttpRequest, session_id: SessionId) -> Any:
    """Return the signed-in user's session; 404 for a missing one and anyone else's alike."""
    try:
        return operations.owned_session(session_id, request.user.pk)
    except SessionNotFound as exc:
        raise Http404(str(exc)) from exc


def _panel_response(
    request: HttpRequest,
    context: dict[str, Any],
    status: int = 200,
    template: str = "handoff/panel.html",
) -> HttpResponse:
    """Render the panel and, out of band, the title's hint; ask the page to refresh its sidebar
    when the attempt's phase moved (``?phase=`` is the phase the page showed) or the user
    acted."""
    response = render(request, template, context, status=status)
    hint = hint_context(context["session"], oob=True)
    response.write(render_to_string("handoff/_conv_hint.html", hint, request))
    last = (context.get("report") or {}).get("last") or {}
    if request.method == "POST" or request.GET.get("phase", "") != last.get("phase", ""):
        trigger_client_event(response, "sidebar:refresh")
    return response


@require_GET
@cache_control(private=True, no_cache=True)
@conditional_page
def panel(request: HttpRequest, session_id: SessionId) -> HttpResponse:
    """The handoff panel of one of the user's sessions (polled by the tab that asked for an
    attempt until its first event; 304 when unchanged: stored, revalidated each time)."""
    session = _owned_session(request, session_id)
    return _panel_response(request, session_panel(session))


@require_POST
def session_action(request: HttpRequest, session_id: SessionId, action: str) -> HttpResponse:
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
        context = session_panel(session) | {"action_error": refusal_text(exc)}
        return _panel_response(request, context, status=409)
    return _panel_response(request, session_panel(session))


def _review_form(
    request: HttpRequest, session: Any, form: BriefReview, error: str = "", status: int = 200
) -> HttpResponse:
    record = review.waiting(session.pk)
    context = {
        "session": session,
        "review_form": form,
        "review_error": error,
        **terminal_way(session, record.pk if record is not None else None),
    }
    return render(request, "handoff/_review_form.html", context, status=status)


def _panel_instead(
    request: HttpRequest, session: Any, error: str = "", status: int = 200, note: object = ""
) -> HttpResponse:
    """The whole panel, swapped out of band in place of the page's panel (the review ended);
    the form itself is not swapped. The line under the composer (which may still say the
    brief is being written) shows ``note`` instead, or nothing.

    Out of band, not ``HX-Retarget``: the live panel update of the same change may have
    arrived first and dropped the form from the page, and htmx looks for a re-target beside
    the (then detached) form ("Invalid re-target"), but for out-of-band content in the page.
    """
    context = session_panel(session) | {"oob": True, "review_note": note}
    context |= {"action_error": error} if error else {}
    response = _panel_response(request, context, status, "handoff/_review_ended.html")
    return reswap(response, "none")


@require_http_methods(["GET", "POST"])
def review_brief(request: HttpRequest, session_id: SessionId) -> HttpResponse:
    """The review form of the session's handoff waiting for review, and its buttons.

    GET shows the brief as the model wrote it. POST ``op``: ``add:FIELD`` shows the form with
    one more item in that list; ``commit`` commits the edited brief (a brief the seed's rules
    refuse is shown again with the reason, 422, nothing changed); ``discard`` discards the
    draft. When no review waits — none did, or another tab's commit or discard ended it after
    this request found it waiting (two tabs pressing Discard at once) — or the commit failed,
    the panel is shown instead with the reason (409; docs/guide.md, "Review before the
    successor starts").
    """
    session = _owned_session(request, session_id)
    record = review.waiting(session.pk)
    if record is None:
        return _panel_instead(request, session, refusal_text(NoReviewWaiting(session.pk)), 409)
    op = request.POST.get("op", "")
    if request.method == "GET":
        return _review_form(request, session, BriefReview(record.brief or {}))
    if op == Action.DISCARD:
        try:
            operations.discard_review(session.pk)
        except HandoffError as exc:
            return _panel_instead(request, session, refusal_text(exc), status=409)
        return _panel_instead(request, session, note=DISCARDED)
    add = op.removeprefix("add:") if op.startswith("add:") else ""
    form = BriefReview(record.brief or {}, request.POST, add=add)
    if add or op != Action.COMMIT:
        return _review_form(request, session, form)
    if not form.is_valid():
        error = str(_("Correct the fields marked below."))
        return _review_form(request, session, form, error, 422)
    try:
        operations.commit_review(session.pk, form.brief())
    except InvalidBrief as exc:
        return _review_form(request, session, form, refusal_text(exc), status=422)
    except HandoffError as exc:
        return _panel_instead(request, session, refusal_text(exc), status=409)
    return _panel_instead(request, session)


@require_GET
def lineage_page(request: HttpRequest, session_id: SessionId) -> HttpResponse:
    """The chain ``session_id`` is on: every hop with its reason, metrics, time, brief and
    inheritance report, oldest first (a session outside any chain says so)."""
    session = _owned_session(request, session_id)
    context = neighbours(session) | {"hops": hops(session), "base_template": base_template()}
    return render(request, "handoff/lineage.html", context)
