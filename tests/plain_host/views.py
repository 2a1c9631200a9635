"""The plain host's one page: a conversation, its handoff panel and its log (its owner's only)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from tests.plain_host.models import Conversation


@login_required
def conversation(request: HttpRequest, session_id: Any) -> HttpResponse:
    """Render the conversation ``session_id`` of the signed-in user (404 for anyone else's),
    with the handoff's panel; the follower's baseline middleware reads ``session_id``."""
    found = get_object_or_404(Conversation, pk=session_id, owner=request.user)
    context = {"conversation": found, "current_id": found.pk}
    return render(request, "plain_host/conversation.html", context)
