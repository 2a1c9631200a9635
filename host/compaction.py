"""The host's own compaction, kept installed as the fallback (docs/spec.md, Compaction).

Compaction summarizes the effective context in place: the older messages stay in the log,
marked compacted; the summary becomes the start of the effective context; the session counts
one more compaction (feeding the ``repeated-compaction`` trigger). Manual (``/compact`` in the
composer) or automatic near the model's window when handoff does not apply. With a model
endpoint the summary is one model call; offline it is a deterministic extract.
"""

from __future__ import annotations

import re

from django.db import transaction

from host import agent, log
from host.models import Message, Role, Session, SessionEvent
from host.usage import context_tokens, measure

AUTO_RATIO = 0.9  # automatic compaction above this share of the context window
SUMMARY_MAX_CHARS = 2400  # offline summary cap, characters
SUMMARY_MAX_TOKENS = 2000  # model summary cap, tokens
SUMMARY_TIMEOUT = 180.0  # seconds for the model's summary call
TRIGGERS = ("manual", "auto")
COMMAND = "/compact"  # typed in the composer; logged, never summarized

SUMMARY_PROMPT = (
    "You compact a long working conversation. Write a concise plain-text summary that lets the "
    "work continue without the older messages: the user's goal, decisions and corrections, "
    "constraints, files, commands and links involved, what was verified, and what is pending. "
    "Do not answer the user and write no preamble."
)

_REFERENCE = re.compile(r"https?://[^\s)\"'<>\]]+|(?<![\w/.])/(?:[\w.\-]+/)+[\w.\-]+")


class CompactionRefused(ValueError):
    """There is nothing to compact, or the conversation moved on while it was summarized."""


def compactable(session: Session) -> bool:
    """Return True when the effective context holds something to summarize.

    That is a message not compacted yet, not forwarded away and not a ``/compact`` command.
    """
    return (
        Message.objects.filter(session=session, compacted=False, forwarded_to__isnull=True)
        .exclude(content=COMMAND)
        .exists()
    )


def compact(session: Session, *, trigger: str = "manual") -> SessionEvent:
    """Summarize the effective context in place and return the compaction event.

    ``trigger`` is manual or auto (``ValueError`` otherwise). The summary is made outside any
    transaction; then, in one transaction, the messages are marked compacted, the event logged
    and the count raised (``host.log.record_compaction``), so a crash half-way leaves the log as
    it was. Raises ``CompactionRefused`` when nothing is left to compact or a message arrived
    while summarizing (nothing changes then), and the model's errors with an endpoint.
    """
    if trigger not in TRIGGERS:
        raise ValueError(f"unknown compaction trigger {trigger!r}; expected manual or auto")
    context = agent.effective_context(session)
    content = agent.EffectiveContext(
        context.summary, [m for m in context.messages if m.content != COMMAND]
    )
    if not content.messages:
        raise CompactionRefused(f"session {session.pk} has nothing to compact yet")
    summary = _model_summary(session, content) if agent.llm_configured() else _extract(content)
    with transaction.atomic():
        Session.objects.select_for_update().filter(pk=session.pk).first()
        latest = (
            Message.objects.filter(session=session, compacted=False)
            .order_by("-seq")
            .values_list("seq", flat=True)
            .first()
        )
        if latest != context.messages[-1].seq:
            raise CompactionRefused(
                f"session {session.pk} moved on while it was summarized; compact again"
            )
        return log.record_compaction(session, summary, trigger=trigger)


def pressure(session: Session) -> int:
    """Return the current context pressure in tokens.

    The ``context`` basis (docs/spec.md, Token sources): the prompt size of the latest model call
    when that call came after the last compaction, else the meter's estimate of the effective
    context.
    """
    return context_tokens(session) or measure(session)


def maybe_auto_compact(session: Session, capacity: int) -> SessionEvent | None:
    """Compact automatically when the pressure exceeds 90 % of ``capacity`` (tokens).

    Called only when no handoff applies (the engine's fallback; docs/spec.md, Compaction). Nothing
    happens when the capacity is unknown (0) or when there is nothing to compact; a conversation
    that moved on while summarizing is compacted at a later call. Returns the compaction event or
    None.
    """
    if capacity <= 0 or pressure(session) < AUTO_RATIO * capacity:
        return None
    try:
        return compact(session, trigger="auto")
    except CompactionRefused:
        return None


def _model_summary(session: Session, context: agent.EffectiveContext) -> str:
    """One model call summarizing the effective context, fitted to the model's window."""
    model = agent.llm_model(session)
    chat = agent.fit_prompt(
        [
            {"role": "system", "content": SUMMARY_PROMPT},
            {"role": "user", "content": _transcript(context)},
        ],
        agent.prompt_window(session, model) - SUMMARY_MAX_TOKENS,
    ).messages
    completion = agent.complete(
        chat,
        max_tokens=SUMMARY_MAX_TOKENS,
        timeout=SUMMARY_TIMEOUT,
        purpose="compaction",
        model=model,
    )
    return agent.completion_text(completion).strip()


def _transcript(context: agent.EffectiveContext) -> str:
    lines = [f"Earlier summary:\n{context.summary}\n"] if context.summary else []
    lines += [f"[{m.role}] {m.content}" for m in context.messages]
    return "\n\n".join(lines)


def _extract(context: agent.EffectiveContext) -> str:
    """A deterministic extractive summary: requests, latest answer, files and links mentioned.

    At most ``SUMMARY_MAX_CHARS`` characters and at most half the summarized text, so the
    effective context always shrinks.
    """
    messages = context.messages
    lines = [f"Summary of {len(messages)} earlier message(s) (offline, extractive)."]
    if context.summary:
        lines.append(f"Earlier summary: {agent.excerpt(context.summary, 600)}")
    requests = [agent.excerpt(m.content, 160) for m in messages if m.role == Role.USER][-8:]
    if requests:
        lines += ["User requests:", *(f"- {request}" for request in requests)]
    answer = next((m for m in reversed(messages) if m.role == Role.ASSISTANT), None)
    if answer is not None:
        lines.append(f"Latest answer: {agent.excerpt(answer.content, 300)}")
    references = _references(context)
    if references:
        lines.append(f"Files and links: {', '.join(references)}")
    original = len(context.summary) + sum(len(m.content) for m in messages)
    return "\n".join(lines)[: min(SUMMARY_MAX_CHARS, max(original // 2, 80))]


def _references(context: agent.EffectiveContext) -> list[str]:
    """File paths and URLs in order of their last mention, the latest twelve."""
    found: dict[str, None] = {}
    for text in [context.summary, *(m.content for m in context.messages)]:
        for match in _REFERENCE.findall(text):
            found.pop(match, None)
            found[match] = None
    return list(found)[-12:]
