"""Admin page of the global settings row: the per-model context windows are edited here.

The switch and the thresholds are edited on the Conversation Collaboration card and shown
read-only; the context windows go through the settings store like every other write, so they are
validated (``{model: tokens ≥ 0}``) and the row's version is bumped.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import HttpRequest
from django.utils.formats import number_format
from django.utils.translation import gettext_lazy as _

from handoff import services, tasks
from handoff.models import HandoffSettings
from handoff.settings_store import validate


class ContextWindowsForm(forms.ModelForm):  # type: ignore[type-arg]
    """Validates ``context_windows`` with the store's rules before anything is saved."""

    class Meta:
        model = HandoffSettings
        fields = ["context_windows"]

    def clean_context_windows(self) -> Any:
        value = self.cleaned_data["context_windows"]
        try:
            validate(services.load_settings(), {"context_windows": value})
        except ValidationError as exc:
            raise ValidationError(exc.messages) from exc
        return value


@admin.register(HandoffSettings)
class HandoffSettingsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """The singleton row; never added or deleted here (the store creates it)."""

    form = ContextWindowsForm
    list_display = ["__str__", "auto_handoff", "handoff_ratio", "token_ceiling", "version"]
    readonly_fields = [
        "auto_handoff",
        "handoff_ratio",
        "token_ceiling",
        "handoff_min_turns",
        "handoff_compactions",
        "token_basis",
        "review_handoffs",
        "version",
        "updated",
    ]
    fields = ["context_windows", *readonly_fields]

    @admin.display(description=_("token ceiling"))
    def token_ceiling(self, obj: HandoffSettings) -> str:
        """The ceiling in tokens, grouped as the card shows it (120,000)."""
        return number_format(obj.handoff_tokens, force_grouping=True)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Save through the settings store (validated, version bumped, one transaction), then
        evaluate the enabled mains in the background: a window changes their capacity."""
        services.settings_store().save(context_windows=form.cleaned_data["context_windows"])
        tasks.enqueue_evaluation()
