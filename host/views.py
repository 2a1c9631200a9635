"""The chat pages (issue 3, §2): index, conversation page, sidebar fragment, composer, new form.

Every view needs a signed-in user (``host.middleware``). A session belongs to its owner: anyone
else gets 404 for it, the same answer as for a session that does not exist.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit
from uuid import UUID

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import trigger_client_event
from django_htmx.middleware import HtmxDetails

from host.composer import submit
from host.forms import ComposerForm, NewSessionForm
from host.models import Session
from host.sidebar import sidebar_groups
from host.timeline import LATEST, timeline


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def owned_session(request: HttpRequest, session_id: UUID) -> Session:
    """Return the signed-in user's session ``session_id``; raise Http404 for anyone else's."""
    return get_object_or_404(
        Session.objects.select_related("workspace"), pk=session_id, owner_id=request.user.pk
    )


def _current(request: HttpRequest) -> UUID | None:
    try:
        return UUID(request.GET.get("current", ""))
    except ValueError:
        return None


def _show_all(request: HttpRequest) -> bool:
    """Whether to show the whole log: ``?all=1`` on the request or, for an htmx post from the
    page, on the page's URL (the ``HX-Current-URL`` header)."""
    if request.GET.get("all") == "1":
        return True
    current = request.headers.get("HX-Current-URL", "")
    return parse_qs(urlsplit(current).query).get("all") == ["1"]


def _log_context(request: HttpRequest, session: Session) -> dict[str, Any]:
    """The timeline's context: the latest entries (all with ``?all=1``) and the count before."""
    show_all = _show_all(request)
    log = timeline(session, limit=None if show_all else LATEST)
    return {"entries": log.entries, "earlier": log.earlier, "show_all": show_all}


def _page_context(request: HttpRequest, session: Session | None) -> dict[str, Any]:
    current_id = session.pk if session else None
    return {"groups": sidebar_groups(request.user, current_id), "current_id": current_id}


@never_cache
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """Open the most recently updated conversation, or show the empty state with the new form."""
    latest = (
        Session.objects.filter(owner_id=request.user.pk, archived=False, parent__isnull=True)
        .order_by("-updated")
        .first()
    )
    if latest is not None:
        return redirect("chat:session", session_id=latest.pk)
    context = _page_context(request, None) | {"form": NewSessionForm(owner=request.user)}
    return render(request, "chat/empty.html", context)


@never_cache  # changes by events: Back must not show a stale copy (the HTTP cache)
@require_GET
def session_page(request: HttpRequest, session_id: UUID) -> HttpResponse:
    """The conversation page: sidebar, the log, the handoff panel and the composer."""
    session = owned_session(request, session_id)
    context = (
        _page_context(request, session)
        | {"session": session, "composer": ComposerForm.fresh()}
        | _log_context(request, session)
    )
    return render(request, "chat/session.html", context)


@require_GET
def sidebar(request: HttpRequest) -> HttpResponse:
    """The sidebar fragment (inside ``#session-list``); ``?current=<id>`` keeps that row shown."""
    current = _current(request)
    return render(
        request,
        "chat/_sidebar.html",
        {"groups": sidebar_groups(request.user, current), "current_id": current},
    )


@require_GET
def messages(request: HttpRequest, session_id: UUID) -> HttpResponse:
    """The log fragment (``#timeline``); it keeps polling while the agent is running."""
    session = owned_session(request, session_id)
    context = {"session": session} | _log_context(request, session)
    return render(request, "chat/_timeline.html", context)


@require_POST
def compose(request: HtmxHttpRequest, session_id: UUID) -> HttpResponseBase:
    """Post the composer's text (a message or a slash command) and show what happened.

    An htmx request gets the feedback fragment plus the refreshed log and a fresh composer
    (out-of-band), and the events ``handoff:refresh`` and ``sidebar:refresh``; a plain form post
    is sent back to the page. Invalid input: 422, nothing posted.
    """
    session = owned_session(request, session_id)
    form = ComposerForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "chat/_compose_result.html",
            {"session": session, "composer": form, "outcome": None, "entries": None},
            status=422,
        )
    outcome = submit(
        session, request.user, form.cleaned_data["text"], form.cleaned_data["client_id"]
    )
    if not request.htmx:
        return redirect("chat:session", session_id=session.pk)
    session.refresh_from_db()
    context = {
        "session": session,
        "outcome": outcome,
        "composer": ComposerForm.fresh() if outcome.kind != "error" else form,
    } | _log_context(request, session)
    response = render(request, "chat/_compose_result.html", context)
    # The handoff panel and the sidebar refresh themselves on these (chat/*.html).
    trigger_client_event(response, "handoff:refresh")
    return trigger_client_event(response, "sidebar:refresh")


@never_cache  # its sidebar changes by events
@require_http_methods(["GET", "POST"])
def new_session(request: HttpRequest) -> HttpResponse:
    """The new conversation form (title, workspace, working directory); creates and opens it."""
    form = NewSessionForm(request.POST or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        session = form.save()
        return redirect("chat:session", session_id=session.pk)
    status = 422 if form.is_bound else 200
    return render(
        request, "chat/new.html", _page_context(request, None) | {"form": form}, status=status
    )
