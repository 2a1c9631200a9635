"""Admin pages for handoff records, per-main state and redirects.

All three are read-only: they change only through the actions, which call the same validated
operations as the API and the composer (``handoff.operations``): the state is never edited by
hand. The actions are what a person does with a stuck record (docs/spec.md, Recovery): open the
successor, disable (stops forwarding), enable again; and, for a handoff waiting for review (the
"Waiting for review" filter), commit its brief as it stands or discard it. A redirect's page has
a "Stop forwarding" button (``disable`` on the old main, docs/spec.md, Recovery).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.utils.formats import date_format, number_format
from django.utils.safestring import mark_safe
from django.utils.timezone import localtime
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from handoff import operations, services
from handoff.conf import session_url
from handoff.exceptions import HandoffError
from handoff.models import HandoffRecord, MainState, Redirect
from handoff.refusals import refusal_text
from handoff.session_model import get_session_model
from handoff.words.brief import HEADINGS

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

RECORD_FIELDS = (
    "id",
    "source",
    "target",
    "phase",
    "reason",
    "source_revision",
    "error",
    "metrics_view",
    "brief_view",
    "original_brief_view",
    "review_until",
    "inheritance_view",
    "created",
    "updated",
)


def rendered_metrics(metrics: dict[str, Any] | None) -> str:
    """Return a record's figures as the app shows them ("150,000 tokens · 9 turns · 1
    compaction · context window 200,000", grouped as the reader's language groups them)."""
    if not metrics:
        return "—"
    figures = {name: int(metrics.get(name) or 0) for name in ("tokens", "turns", "compactions")}
    line = render_to_string("handoff/_record_metrics.html", {"metrics": figures}).strip()
    window = metrics.get("capacity")
    if window:
        line += " · " + gettext("context window %(tokens)s") % {"tokens": grouped(window)}
    return line


def grouped(number: Any) -> str:
    """``number`` with its thousands grouped in the active language (120000 → "120,000")."""
    return number_format(number, force_grouping=True)


DISABLED = _("Disabled")
ENABLED = _("Enabled")


def rendered_brief(brief: dict[str, Any] | None) -> str:
    """Return the brief as HTML (the goal, then each non-empty list under its heading); "—"
    for a record without one."""
    if not brief:
        return "—"
    sections = [(heading, brief.get(name) or []) for name, heading in HEADINGS.items()]
    html = render_to_string("handoff/_brief.html", {"brief": brief, "sections": sections})
    return mark_safe(html)  # noqa: S308 - rendered by the template, which escapes every value


def rendered_inheritance(rows: list[dict[str, str]] | None) -> str:
    """Return the inheritance report as the table the status report shows; "—" when empty."""
    if not rows:
        return "—"
    html = render_to_string("handoff/_inheritance.html", {"rows": rows})
    return mark_safe(html)  # noqa: S308 - rendered by the template, which escapes every value


def _apply(
    modeladmin: admin.ModelAdmin[Any],
    request: HttpRequest,
    session_ids: list[Any],
    operation: Any,
    done: object,
) -> None:
    """Run ``operation`` on each session id; report successes and each refusal as messages."""
    succeeded = 0
    for session_id in dict.fromkeys(session_ids):
        try:
            operation(session_id)
        except HandoffError as exc:
            modeladmin.message_user(request, refused(session_id, exc), messages.ERROR)
        else:
            succeeded += 1
    if succeeded:
        text = ngettext(
            "%(done)s for %(n)d conversation.", "%(done)s for %(n)d conversations.", succeeded
        )
        modeladmin.message_user(request, text % {"done": done, "n": succeeded}, messages.SUCCESS)


def refused(session_id: Any, error: HandoffError) -> str:
    """What a refused action says of one conversation: its title in quotes, then the refusal in
    the conversation's words (``refusals.refusal_text``), so the message neither starts with an
    id (the admin capitalises a message's first letter) nor names the conversation twice."""
    controller = services.session_controller()
    found = controller.get(str(session_id)) if controller is not None else None
    title = (found.title if found is not None else "") or gettext("Untitled conversation")
    return gettext("“%(title)s”: %(reason)s") % {"title": title, "reason": refusal_text(error)}


def _session_action(
    operation: Callable[[Any], Any], done: object, description: StrOrPromise, session_of: str
) -> Callable[[Any, HttpRequest, QuerySet[Any]], None]:
    """An admin action running ``operation`` (one of ``handoff.operations``) on the session
    each selected row names in its ``session_of`` attribute (e.g. ``"source_id"``), reporting
    ``done`` (docs/spec.md, Recovery)."""

    @admin.action(description=description)
    def action(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        sessions = [getattr(row, session_of) for row in queryset]
        _apply(modeladmin, request, sessions, operation, done)

    return action


def _open(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, sessions: list[Any]
) -> HttpResponseRedirect | None:
    """Open the one successor named: its chat page when the signed-in user owns it, else its
    admin page (chat pages are their owner's only) with a message saying so; a message when
    none or several are named, or the user may not view sessions in the admin."""
    targets = list({s.pk: s for s in sessions if s is not None}.values())
    if len(targets) != 1:
        modeladmin.message_user(
            request, _("Select exactly one entry that has a successor."), messages.WARNING
        )
        return None
    successor = targets[0]
    if successor.owner_id == request.user.pk:
        return HttpResponseRedirect(session_url(successor.pk))
    owner = successor.owner.get_username()
    meta = get_session_model()._meta  # the host's session model (HANDOFF_SESSION_MODEL)
    if not request.user.has_perm(f"{meta.app_label}.view_{meta.model_name}"):
        modeladmin.message_user(
            request,
            gettext(
                "The successor belongs to %(owner)s: only they open its chat page, and you may "
                "not view sessions in the admin."
            )
            % {"owner": owner},
            messages.WARNING,
        )
        return None
    modeladmin.message_user(
        request,
        gettext(
            "The successor belongs to %(owner)s: only they open its chat page; here is its admin "
            "page."
        )
        % {"owner": owner},
        messages.INFO,
    )
    change = f"admin:{meta.app_label}_{meta.model_name}_change"
    return HttpResponseRedirect(reverse(change, args=[successor.pk]))


class WaitingForReview(admin.SimpleListFilter):
    """Records waiting for review (``prepared`` with ``review_until`` set), or the others."""

    title = _("review")
    parameter_name = "review"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("waiting", gettext("Waiting for review"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "waiting":
            return queryset.filter(phase="prepared", review_until__isnull=False)
        return queryset


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Viewable, never added, edited or deleted by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(HandoffRecord)
class HandoffRecordAdmin(ReadOnlyAdmin):
    """Records: filter by phase and reason, search by source or target id and title."""

    # Titles and dates as text columns (a foreign key or a date column never wraps), so every
    # column fits beside the filters at 1280 px.
    list_display = ["short_id", "source_title", "target_title", "phase", "reason", "tokens", "when"]
    list_filter = [WaitingForReview, "phase", "reason"]
    search_fields = ["source__id", "target__id", "source__title", "target__title"]
    date_hierarchy = "created"
    list_select_related = ["source", "target", "target__owner"]
    fields = RECORD_FIELDS
    readonly_fields = RECORD_FIELDS
    actions = [
        "open_successor",
        "disable_source",
        "enable_source",
        "commit_review",
        "discard_review",
    ]

    class Media:
        css = {"all": ["handoff/admin.css"]}

    @admin.display(description=_("record"))
    def short_id(self, obj: HandoffRecord) -> str:
        return str(obj.id)[:8]

    @admin.display(description=_("source"), ordering="source__title")
    def source_title(self, obj: HandoffRecord) -> str:
        return str(obj.source)

    @admin.display(description=_("target"), ordering="target__title")
    def target_title(self, obj: HandoffRecord) -> str:
        return str(obj.target) if obj.target is not None else "—"

    @admin.display(description=_("created"), ordering="created")
    def when(self, obj: HandoffRecord) -> str:
        return date_format(localtime(obj.created), "SHORT_DATETIME_FORMAT")

    @admin.display(description=_("tokens"))
    def tokens(self, obj: HandoffRecord) -> str:
        tokens = (obj.metrics or {}).get("tokens")
        return "—" if tokens is None else grouped(tokens)

    @admin.display(description=_("metrics"))
    def metrics_view(self, obj: HandoffRecord) -> str:
        return rendered_metrics(obj.metrics)

    @admin.display(description=_("brief"))
    def brief_view(self, obj: HandoffRecord) -> str:
        return rendered_brief(obj.brief)

    @admin.display(description=_("the model's brief (before review)"))
    def original_brief_view(self, obj: HandoffRecord) -> str:
        return rendered_brief(obj.original_brief)

    @admin.display(description=_("inheritance"))
    def inheritance_view(self, obj: HandoffRecord) -> str:
        return rendered_inheritance(obj.inheritance)

    @admin.action(description=_("Open the successor"))
    def open_successor(
        self, request: HttpRequest, queryset: QuerySet[HandoffRecord]
    ) -> HttpResponseRedirect | None:
        return _open(self, request, [r.target for r in queryset])

    disable_source = _session_action(
        operations.disable, DISABLED, _("Disable (stops forwarding)"), "source_id"
    )

    enable_source = _session_action(operations.enable, ENABLED, _("Enable again"), "source_id")

    commit_review = _session_action(
        operations.commit_review,
        _("Review committed"),
        _("Commit the review (the brief as it stands)"),
        "source_id",
    )

    discard_review = _session_action(
        operations.discard_review, _("Review discarded"), _("Discard the review"), "source_id"
    )


@admin.register(MainState)
class MainStateAdmin(ReadOnlyAdmin):
    """Per-main switches and deferral (docs/spec.md, State: ``MainState``)."""

    list_display = ["session", "enabled", "requested", "inherited_from", "deferred", "updated"]
    list_filter = ["enabled", "requested"]
    search_fields = ["session__id", "session__title"]
    list_select_related = ["session", "inherited_from"]
    actions = ["disable_main", "enable_main"]

    disable_main = _session_action(
        operations.disable, DISABLED, _("Disable (stops forwarding)"), "session_id"
    )

    enable_main = _session_action(operations.enable, ENABLED, _("Enable again"), "session_id")


@admin.register(Redirect)
class RedirectAdmin(ReadOnlyAdmin):
    """Redirects ``source -> destination`` (docs/spec.md, Forwarding and cycles)."""

    list_display = ["source", "destination", "record", "created"]
    search_fields = ["source__id", "destination__id", "source__title", "destination__title"]
    list_select_related = ["source", "destination", "destination__owner", "record"]
    actions = ["open_destination", "disable_source"]
    change_form_template = "admin/handoff/redirect/change_form.html"

    def get_urls(self) -> list[URLPattern]:
        stop = self.admin_site.admin_view(require_POST(self.stop_forwarding))
        own = [path("<path:object_id>/stop-forwarding/", stop, name="handoff_redirect_stop")]
        return own + super().get_urls()

    def stop_forwarding(self, request: HttpRequest, object_id: str) -> HttpResponseRedirect:
        """The page's "Stop forwarding" button: ``disable`` on the old main (docs/spec.md,
        Recovery); its redirect is removed. Needs the permission to view redirects."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        redirect = get_object_or_404(Redirect, pk=object_id)
        _apply(self, request, [redirect.source_id], operations.disable, _("Forwarding stopped"))
        return HttpResponseRedirect(reverse("admin:handoff_redirect_changelist"))

    @admin.action(description=_("Open the successor"))
    def open_destination(
        self, request: HttpRequest, queryset: QuerySet[Redirect]
    ) -> HttpResponseRedirect | None:
        return _open(self, request, [r.destination for r in queryset])

    disable_source = _session_action(
        operations.disable, DISABLED, _("Disable (stops forwarding)"), "source_id"
    )
