"""The follower's JSON snapshot (read after subscribing; docs/spec.md, Follower rules)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from follower.snapshot import snapshot


@login_not_required
@require_GET
def snapshot_view(request: HttpRequest) -> JsonResponse:
    """Return the signed-in user's snapshot: ``{"last_event_id", ...}`` and what the sources add
    (this host: ``"sessions": [row, ...]``, ``follower.snapshot``).

    Anonymous requests get 401 ``{"detail": ...}`` rather than the login page's redirect (a
    script, not a person, reads this URL).
    """
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "sign in to follow your sessions"}, status=401)
    return JsonResponse(snapshot(request.user.pk))
