"""Settings → Conversation Collaboration (docs/spec.md, Switches; Trigger).

The card saves each field the moment it changes (one htmx POST per field). Only staff change the
global settings: others see the card read-only and get 403 when they post. The host may add
sections of its own under the card: ``settings.HANDOFF_SETTINGS_SECTIONS`` lists their
templates, each rendered with the card page's context (none by default).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from handoff import operations, services
from handoff.exceptions import HandoffError
from handoff.models import HandoffRecord, MainState
from handoff.settings_store import rendered_value
from handoff.web.host_pages import base_template
from handoff.web.panel import describe_blocker
from handoff_settings.conf import card_settings
from handoff_settings.forms import HandoffSettingsForm, StaleSetting


def _field_context(
    form: HandoffSettingsForm, name: str, values: Any, **extra: Any
) -> dict[str, Any]:
    """A field's context: the bound field and its stored value as rendered (sent back with a
    save, so a save of a value changed meanwhile is refused)."""
    return {
        "field": form[name],
        "name": name,
        "rendered": rendered_value(getattr(values, name)),
    } | extra


def _stored_form() -> tuple[HandoffSettingsForm, Any]:
    values = services.load_settings()
    return HandoffSettingsForm(initial=values.as_dict()), values


def _status_channel() -> str:
    """``missing`` when the host provides no status channel, ``down`` when it is unreachable,
    else ``unknown`` (the follower reports the websocket's state in the page)."""
    channel = services.status_channel()
    if channel is None:
        return "missing"
    return "unknown" if channel.available() else "down"


def activity_context(user: Any) -> dict[str, Any]:
    """The card's activity: the status report of the user's latest record's source, and the
    user's mains that are deferred, each with its blockers in words (none of either without a
    session controller: which sessions are the user's is the host's to say)."""
    try:
        owned = operations.owned_session_ids(user.pk)
    except HandoffError:
        return {"last_record": None, "report": None, "deferred_mains": []}
    last = HandoffRecord.objects.filter(source__in=owned).order_by("-created").first()
    report = None
    if last is not None:
        try:
            report = operations.status(last.source_id)
        except HandoffError:
            report = None
    deferred = [
        (state.session, [describe_blocker(b) for b in state.deferred])
        for state in MainState.objects.filter(session__in=owned)
        .exclude(deferred=[])
        .select_related("session")
    ]
    return {"last_record": last, "report": report, "deferred_mains": deferred}


@never_cache  # changes by events: Back must not show a stale copy
@require_GET
def card(request: HttpRequest) -> HttpResponse:
    """The Conversation Collaboration card."""
    form, values = _stored_form()
    context = {
        "fields": [_field_context(form, name, values) for name in form.fields],
        "can_edit": request.user.is_staff,
        "version": values.version,
        "status_channel": _status_channel(),
        "base_template": base_template(),
        "host_sections": card_settings().sections,
    } | activity_context(request.user)
    return render(request, "handoff_settings/card.html", context)


@require_GET
def activity(request: HttpRequest) -> HttpResponse:
    """The card's activity fragment (polled, and refreshed on follower events)."""
    return render(request, "handoff_settings/_activity.html", activity_context(request.user))


@require_POST
def save_field(request: HttpRequest, name: str) -> HttpResponse:
    """Validate and store one setting; answer with the field as the server stored it.

    Invalid input: 422, the field shows the error next to it and nothing is saved. A save whose
    ``rendered`` value (the field's value when the card showed it) is not the stored one any
    more: 409, the field shows the current value and says so, nothing is saved. An unchanged
    value is not written again (a double submit makes one change). A change answers with the
    ``settings:saved`` client event, on which the activity card refreshes. Non-staff: 403.
    """
    if not request.user.is_staff:
        raise PermissionDenied("Only staff change the global settings.")
    try:
        form = HandoffSettingsForm(request.POST, only=name)
    except KeyError as exc:
        raise Http404(f"No setting {name!r}.") from exc
    shown = request.POST.get("rendered")
    if form.is_valid():
        try:
            values, changed = form.save(rendered=None if shown is None else {name: shown})
        except StaleSetting as stale:
            return _stale_response(request, name, stale.values)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            response = _stored_field(request, name, values, saved=True, changed=changed)
            # The "Your handoffs" card shows the switch and the basis: it refreshes at once.
            return trigger_client_event(response, "settings:saved") if changed else response
    stored = services.load_settings()
    context = _field_context(
        form,
        name,
        stored,
        can_edit=True,
        stored_value=getattr(stored, name),
        errors=[str(e) for errs in form.errors.values() for e in errs],
    )
    return render(request, "handoff_settings/_field.html", context, status=422)


def _stored_field(
    request: HttpRequest, name: str, values: Any, status: int = 200, **extra: Any
) -> HttpResponse:
    """The field rendered with its stored value."""
    stored = HandoffSettingsForm(initial=values.as_dict(), only=name)
    context = _field_context(stored, name, values, can_edit=True, version=values.version, **extra)
    return render(request, "handoff_settings/_field.html", context, status=status)


def _stale_response(request: HttpRequest, name: str, values: Any) -> HttpResponse:
    """409: the field changed since it was shown; show the current value, nothing saved."""
    return _stored_field(request, name, values, status=409, stale=True)
