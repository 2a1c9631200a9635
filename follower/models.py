"""Per-user numbered follower events (docs/spec.md, Follower rules; after Zulip's event queues)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class FollowerEvent(models.Model):
    """One event for one user; ``seq`` counts up per user without gaps, set once the change the
    event reports committed (None until then: ``follower.events.deliver``)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    seq = models.PositiveBigIntegerField(null=True)
    kind = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["user", "seq"], name="follower_event_unique_seq")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}#{self.seq} {self.kind}"


class FollowerCursor(models.Model):
    """The per-user counter row, locked only while committed events are numbered;
    ``pruned_through`` marks the gap."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE
    )
    last_seq = models.PositiveBigIntegerField(default=0)
    pruned_through = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.user_id} at #{self.last_seq} (pruned through #{self.pruned_through})"
