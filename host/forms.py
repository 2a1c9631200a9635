"""Forms of the chat pages: the composer and the new-conversation form."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from host.models import Session, Workspace
from host.services import DEFAULT_PRESET, AgentPresets
from host.sessions import create_session

MAX_MESSAGE_CHARS = 100_000


class ComposerForm(forms.Form):
    """One message or slash command. ``client_id`` makes a double submit post once."""

    text = forms.CharField(
        label=_("Message"),
        max_length=MAX_MESSAGE_CHARS,
        strip=True,
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "placeholder": _("Message, or /handoff, /handoff status, /compact…"),
                # Unsent text here keeps the tab from following a handoff (the jump's rule).
                "data-handoff-draft": "",
            }
        ),
    )
    client_id = forms.CharField(max_length=64, widget=forms.HiddenInput)

    @classmethod
    def fresh(cls) -> ComposerForm:
        """Return an empty composer carrying a new ``client_id``."""
        return cls(initial={"client_id": uuid.uuid4().hex})


class NewSessionForm(forms.Form):
    """Title, workspace (one of the user's, or none) and working directory of a new session.

    With a workspace and no directory, the session works in the workspace's directory.
    """

    title = forms.CharField(
        label=_("Title"),
        max_length=300,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": _("What is this conversation about?")}),
    )
    workspace = forms.ModelChoiceField(
        queryset=Workspace.objects.none(),
        required=False,
        empty_label=_("No workspace"),
        label=_("Workspace"),
        widget=forms.Select(attrs={"translate": "no"}),  # the user's workspace names
    )
    cwd = forms.CharField(
        label=_("Working directory"),
        max_length=1024,
        required=False,
        help_text=_("Absolute path; defaults to the workspace's directory."),
    )

    def __init__(self, *args: Any, owner: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner
        workspace = self.fields["workspace"]
        assert isinstance(workspace, forms.ModelChoiceField)
        workspace.queryset = Workspace.objects.filter(owner_id=owner.pk)

    def clean_cwd(self) -> str:
        cwd: str = self.cleaned_data["cwd"].strip()
        if cwd and not cwd.startswith("/"):
            raise forms.ValidationError(_("Give an absolute path (starting with /)."))
        return cwd

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        workspace = data.get("workspace")
        if workspace is not None and not data.get("cwd"):
            data["cwd"] = workspace.path
        return data

    def save(self) -> Session:
        """Create the idle, blank session of the default agent preset, on its model
        (``AgentPresets.model_for``; ``host.sessions``)."""
        data = self.cleaned_data
        return create_session(
            self.owner,
            cwd=data["cwd"],
            title=data["title"],
            workspace=data["workspace"],
            model=AgentPresets().model_for(DEFAULT_PRESET),
        )
