"""The services the plain host gives the handoff (``handoff.services``' protocols).

Only what a chat host must give: the session controller, the usage projection and the
summary's model (offline: the handoff's own offline brief). The rest is left out in the
settings (``None``), and the handoff degrades as docs/spec.md, Degradation says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet, Sum

from tests.plain_host import chat
from tests.plain_host.models import Conversation, Line

Ref = Conversation | str | int | UUID


def _get(ref: Ref) -> Conversation | None:
    """The conversation ``ref`` names (itself or its id, of whichever key type), or None for
    an unknown or malformed id."""
    if isinstance(ref, Conversation):
        ref = ref.pk
    try:
        key = Conversation._meta.pk.to_python(ref)  # type: ignore[union-attr]
    except ValidationError:
        return None
    return Conversation.objects.filter(pk=key).first()


def _conversation(ref: Ref) -> Conversation:
    found = _get(ref)
    if found is None:
        raise LookupError(f"no conversation {ref}")
    return found


@dataclass(frozen=True)
class Observation:
    """The conversation with its blocker facts (this host has no subagents, teams or inbox)."""

    session: Conversation
    activities: list[str] = field(default_factory=list)
    live_subagents: list[str] = field(default_factory=list)
    team_members: int = 0
    pending_inbox: int = 0
    hooked: bool = False


class Conversations:
    """``handoff.services.SessionController`` over ``Conversation``."""

    def get(self, session_id: Ref) -> Conversation | None:
        return _get(session_id)

    def ids_starting_with(self, prefix: str, *, limit: int) -> list[str]:
        ids = (str(pk) for pk in Conversation.objects.values_list("pk", flat=True))
        return [pk for pk in ids if pk.startswith(prefix)][:limit]

    def owned_by(self, owner_id: Any) -> QuerySet[Conversation, Any]:
        return Conversation.objects.filter(owner_id=owner_id).values_list("pk", flat=True)

    def observe(self, session_id: Ref) -> Observation | None:
        found = _get(session_id)
        if found is None:
            return None
        return Observation(found, ["turn"] if found.status == "running" else [])

    def create(
        self,
        *,
        owner_id: Any,
        cwd: str,
        title: str,
        agent_preset: str | None,
        runtime: str = "product",
    ) -> Conversation:
        with transaction.atomic():
            created = Conversation.objects.create(owner_id=owner_id, cwd=cwd, title=title)
            chat.announce(created.pk, created=True)
        return created

    def effective_context(self, session: Ref, *, after: int = 0) -> list[dict[str, Any]]:
        lines = Line.objects.filter(conversation=_conversation(session), seq__gt=after)
        return [
            {
                "role": line.role,
                "source_kind": line.kind,
                "content": line.content,
                "tool_name": "",
                "seq": line.seq,
            }
            for line in lines
        ]

    def seed(self, session: Ref, content: str) -> int:
        return chat.append(_conversation(session), "user", content, kind="brief").seq

    def flush(self, session: Ref, seq: int) -> None:
        if not Line.objects.filter(conversation=_conversation(session), seq=seq).exists():
            raise RuntimeError(f"line #{seq} is not stored")

    def rename(self, session: Ref, title: str) -> None:
        chat.change(_conversation(session), title=title)

    def append_notice(self, session: Ref, content: str) -> None:
        chat.append(_conversation(session), "system", content, kind="notice")

    def select_model(self, session: Ref, model: str) -> None:
        Conversation.objects.filter(pk=_conversation(session).pk).update(model=model)

    def is_unwoken_draft(self, session: Ref) -> bool:
        found = _conversation(session)
        return found.status == "idle" and not found.archived and not found.woken

    def archive(self, session: Ref) -> None:
        chat.change(_conversation(session), archived=True)

    def start(self, session: Ref) -> bool:
        chat.answer(_conversation(session))
        return True

    def relay(self, session: Ref, *, role: str, content: str, relay_id: str) -> bool:
        target = _conversation(session)
        if target.lines.filter(relay_id=relay_id).exists():
            return False
        chat.append(target, role, content, kind="relay", relay_id=relay_id)
        chat.answer(target)
        return True

    def step_rejected(self, forwarded_to: str, relay_id: str) -> chat.Forwarded:
        return chat.Forwarded(to=forwarded_to, relay_id=relay_id)


class Usage:
    """``handoff.services.UsageProjection``: the prompt tokens the agent's answers report."""

    def buckets_total(self, session: Ref) -> int:
        total = Line.objects.filter(conversation=_conversation(session)).aggregate(t=Sum("tokens"))
        return int(total["t"] or 0)

    def context_tokens(self, session: Ref) -> int:
        lines = Line.objects.filter(conversation=_conversation(session), tokens__gt=0)
        last = lines.order_by("-seq").values_list("tokens", flat=True).first()
        return int(last or 0)


class OfflineModel:
    """``handoff.services.LanguageModel``: the embedded offline model (the offline brief)."""

    offline = True

    def window(self) -> int:
        return 0

    def complete(self, **kwargs: Any) -> str:
        raise RuntimeError("the offline model answers no calls")
