"""The chat pages (issue 3, §2): index, conversation page, sidebar fragment, composer, new form.

Every view needs a signed-in user (``host.middleware``). A session belongs to its owner: anyone
else gets 404 for it, the same answer as for a session that does not exist.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import parse_qs, urlsplit
from uuid import UUID

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import cache_control, never_cache
from django.views.decorators.http import (
    conditional_page,
    require_GET,
    require_http_methods,
    require_POST,
)
from django.views.i18n import set_language
from django_htmx.http import trigger_client_event
from django_htmx.middleware import HtmxDetails

from common.caching import followed_page
from host.composer import submit
from host.folders import folder_rows
from host.folders import switch_folder as switch_folder_of
from host.forms import ComposerForm, NewSessionForm
from host.models import LanguagePreference, Session
from host.sidebar import LISTED, sidebar_page
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


def _offset(request: HttpRequest) -> int:
    """The list page's ``?offset=`` (rows before it); 0 when missing or not a count."""
    offset = request.GET.get("offset", "")
    return int(offset) if offset.isdigit() else 0


def revalidated(view: Any) -> Any:
    """A fragment the page fetches again now and then: stored by the browser but revalidated
    each time, answered 304 when its ETag (of the content) did not change."""
    return cache_control(private=True, no_cache=True)(conditional_page(view))


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


def _list_context(request: HttpRequest, current_id: UUID | None, offset: int = 0) -> dict[str, Any]:
    """The session list's context: one page of groups, where the next starts, the current id."""
    page = sidebar_page(request.user, current_id, offset=offset)
    return {"groups": page.groups, "next_offset": page.next_offset, "current_id": current_id}


def _page_context(request: HttpRequest, session: Session | None) -> dict[str, Any]:
    return _list_context(request, session.pk if session else None)


@never_cache
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """Open the most recently updated conversation the list shows (``host.sidebar.LISTED``: not
    a blank one, such as a successor whose handoff waits for review), or show the empty state
    with the new form."""
    latest = Session.objects.filter(LISTED, owner_id=request.user.pk).order_by("-updated").first()
    if latest is not None:
        return redirect("chat:session", session_id=latest.pk)
    context = _page_context(request, None) | {"form": NewSessionForm(owner=request.user)}
    return render(request, "chat/empty.html", context)


@followed_page  # changes by events: never cached, but one render serves tabs following a move
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
@revalidated
def sidebar(request: HttpRequest) -> HttpResponse:
    """The sidebar fragment (inside ``#session-list``); ``?current=<id>`` keeps that row shown,
    ``?offset=<rows>`` gives a later page (``host.sidebar``)."""
    context = _list_context(request, _current(request), _offset(request))
    return render(request, "chat/_sidebar.html", context)


@require_GET
@revalidated
def messages(request: HttpRequest, session_id: UUID) -> HttpResponse:
    """The log fragment (``#timeline``): the whole log (``?all=1``), or the latest again after
    the follower had to resync (new entries arrive in events, ``follower.fragments``)."""
    session = owned_session(request, session_id)
    context = {"session": session} | _log_context(request, session)
    return render(request, "chat/_timeline.html", context)


@require_POST
def compose(request: HtmxHttpRequest, session_id: UUID) -> HttpResponseBase:
    """Post the composer's text (a message or a slash command) and show what happened.

    An htmx request gets the feedback fragment plus the refreshed log and a fresh composer
    (out-of-band), and the event ``handoff:refresh``; a plain form post
    is sent back to the page. Invalid input: 422, nothing posted. The session list's rows
    change through the follower's events.
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
    # The handoff panel refreshes itself on this (handoff/panel.html): /handoff changed it.
    return trigger_client_event(response, "handoff:refresh")


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


@require_POST
def choose_language(request: HttpRequest) -> HttpResponseBase:
    """Switch the pages' language (``language``: one of ``settings.LANGUAGES``) and go back to
    ``next``: Django's ``set_language`` (the language cookie), and for a signed-in user the
    choice is stored (``LanguagePreference``), so it follows them to every browser and into
    what follower events render for them. An unknown language changes nothing."""
    response = set_language(request)
    language = request.POST.get("language", "")
    known = {code for code, _name in settings.LANGUAGES}
    if request.user.is_authenticated and language in known:
        LanguagePreference.objects.update_or_create(
            user_id=request.user.pk, defaults={"language": language, "chosen": True}
        )
    return response


@require_POST
def switch_folder(request: HttpRequest) -> HttpResponse:
    """Follow a runtime's sessions folder (``path``; ``on`` present: on, absent: off) for the
    user, saved at once (docs/api.md, `follow_sessions`); answer with its row in Settings as stored.

    A path that is not a runtime's folder: 400, the row says so and nothing changes.
    """
    user_id = cast(int, request.user.pk)  # signed in (LoginRequiredMiddleware)
    path = request.POST.get("path", "")
    on = "on" in request.POST
    rows = {row["path"]: row for row in folder_rows(user_id)}
    context: dict[str, Any]
    try:
        changed = switch_folder_of(user_id, path, on)
    except ValueError as exc:
        unknown = {"runtime": "", "path": path, "exists": False, "on": False}
        context = {"folder": rows.get(path, unknown), "error": str(exc)}
        return render(request, "chat/_followed_folder.html", context, status=400)
    context = {"folder": rows[path] | {"on": on}, "saved": True, "changed": changed}
    return render(request, "chat/_followed_folder.html", context)
