"""The plain host's one page: a conversation and its log (its owner's only)."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from tests.plain_host.models import Conversation


@login_required
def conversation(request: HttpRequest, pk: UUID) -> HttpResponse:
    """Render the conversation ``pk`` of the signed-in user (404 for anyone else's)."""
    found = get_object_or_404(Conversation, pk=pk, owner=request.user)
    return render(request, "plain_host/conversation.html", {"conversation": found})
