"""The agent runtime, the agent half of the LLM service (docs/operations.md, Real mode).

With ``settings.HOST_LLM_BASE_URL`` set (environment ``HANDOFF_LLM_BASE_URL``), the agent
answers through that OpenAI-compatible endpoint (the ``openai`` SDK; model ``HOST_LLM_MODEL``,
key ``HOST_LLM_API_KEY``) and the reply carries the call's usage buckets. Without it, the
offline agent acknowledges what it was given and says it is offline (a plugin's input, such as
a handoff brief, in the words of the plugin's ``host.signals.offline_reply`` receiver); its
usage is the measured prompt, so the context figure grows as the conversation does. The prompt
is the effective context: the last compaction summary and the messages not compacted since.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from openai import OpenAI
from openai.types.chat import ChatCompletion

from host import log
from host.models import (
    InboxItem,
    Message,
    Role,
    Session,
    SessionEvent,
    SessionEventKind,
    SourceKind,
)
from host.signals import offline_reply, session_window
from host.usage import CHARS_PER_TOKEN, Usage

OFFLINE_MODEL = "offline-agent"
REPLY_MAX_TOKENS = 4000  # tokens the agent may answer with
REPLY_TIMEOUT = 180.0  # seconds for one agent call
# One message may take at most this share of the prompt budget before it is clipped.
ENTRY_SHARE = 4
CLIP_MARKER = "[… {count} characters clipped to fit the model's window …]"

SYSTEM_PROMPT = (
    "You are the agent of a long-running working conversation. Answer the latest input. When "
    "the conversation starts from a handoff brief, continue the work it describes: respect its "
    "constraints and start from its next steps."
)

ChatMessage = dict[str, str]


class LLMError(RuntimeError):
    """A model call failed or returned nothing usable."""


class LLMUnavailable(LLMError):
    """No model endpoint is configured (``HOST_LLM_BASE_URL`` is empty)."""


@dataclass(frozen=True)
class EffectiveContext:
    """What the agent sees: the last compaction ``summary`` ("" when none) and later messages."""

    summary: str
    messages: list[Message]


def llm_configured() -> bool:
    """Return True when an OpenAI-compatible endpoint is configured."""
    return bool(settings.HOST_LLM_BASE_URL)


def llm_client(*, timeout: float) -> OpenAI:
    """Return an ``OpenAI`` client for the configured endpoint; one attempt, ``timeout`` seconds.

    Raises ``LLMUnavailable`` when no endpoint is configured.
    """
    if not llm_configured():
        raise LLMUnavailable("no model endpoint is configured (set HANDOFF_LLM_BASE_URL)")
    return OpenAI(
        base_url=settings.HOST_LLM_BASE_URL,
        api_key=settings.HOST_LLM_API_KEY or "not-needed",
        timeout=timeout,
        max_retries=0,
    )


def llm_model(session: Session | None = None) -> str:
    """Return the model to call: ``HOST_LLM_MODEL``, else the session's, else the default."""
    configured: str = settings.HOST_LLM_MODEL
    return configured or (session.model if session else "") or settings.HOST_DEFAULT_MODEL


def effective_context(session: Session) -> EffectiveContext:
    """Return the session's effective context (what follows the last compaction).

    Messages forwarded to another session (docs/spec.md, Forwarding and cycles) are not part of it.
    """
    return EffectiveContext(
        summary=compaction_summary(session), messages=list(effective_messages(session))
    )


def compaction_summary(session: Session) -> str:
    """Return the summary of the session's last compaction ("" when it was never compacted)."""
    last: SessionEvent | None = (
        SessionEvent.objects.filter(session=session, kind=SessionEventKind.COMPACTION)
        .order_by("-seq")
        .first()
    )
    return str(last.data.get("summary", "")) if last else ""


def effective_messages(session: Session) -> QuerySet[Message]:
    """The messages after the last compaction, oldest first, without those forwarded elsewhere."""
    return Message.objects.filter(
        session=session, compacted=False, forwarded_to__isnull=True
    ).order_by("seq")


def turn_context(session: Session) -> EffectiveContext:
    """Return the effective context as the running turn sees it (each input is answered once).

    Input still waiting in the inbox is left out (a later turn answers it), and an input taken
    from the inbox is placed where its turn started, after the answers given before it. Three
    queries: the context's messages, the waiting inbox, the turn starts.
    """
    context = effective_context(session)
    waiting = set(
        InboxItem.objects.filter(session=session, taken=False).values_list("message_id", flat=True)
    )
    first = context.messages[0].seq if context.messages else 0
    starts = SessionEvent.objects.filter(
        session=session, kind=SessionEventKind.TURN_START, seq__gt=first
    )
    started = {data.get("message_seq"): seq for data, seq in starts.values_list("data", "seq")}
    taken = [m for m in context.messages if m.pk not in waiting]
    taken.sort(key=lambda m: started.get(m.seq, m.seq))
    return EffectiveContext(summary=context.summary, messages=taken)


def estimate_tokens(messages: list[ChatMessage]) -> int:
    """Estimate a prompt's size in tokens with the meter's heuristic (characters / 4)."""
    chars = sum(len(m["content"]) for m in messages)
    return -(-chars // CHARS_PER_TOKEN)


def offline_prompt_tokens(context: EffectiveContext, chat: list[ChatMessage]) -> int:
    """Estimate the offline agent's prompt in tokens, consistently with the recorded usage.

    A real endpoint's next prompt is the previous call's prompt, plus its output, plus what was
    logged since; so the estimate starts from the latest message in the effective context that
    carries usage and adds the meter's estimate of the messages after it. Without such a
    message (a fresh or just-compacted session) it is the meter's estimate of the whole chat.
    """
    with_usage = [i for i, m in enumerate(context.messages) if m.output_tokens is not None]
    if not with_usage:
        return estimate_tokens(chat)
    last = context.messages[with_usage[-1]]
    base = sum(
        t or 0
        for t in (
            last.uncached_input_tokens,
            last.cache_read_tokens,
            last.cache_write_tokens,
            last.output_tokens,
        )
    )
    after = context.messages[with_usage[-1] + 1 :]
    return base + -(-sum(len(m.content) for m in after) // CHARS_PER_TOKEN)


def excerpt(text: str, limit: int = 120) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def prompt_messages(session: Session, context: EffectiveContext) -> list[ChatMessage]:
    """Build the chat messages for ``session``: one system message, then the conversation.

    Assistant messages keep their role; every other entry is sent as user input, system notices
    and tool results labelled as such.
    """
    system = SYSTEM_PROMPT
    if session.cwd:
        system += f"\nWorking directory: {session.cwd}"
    if context.summary:
        system += f"\n\nSummary of the earlier conversation (compacted):\n{context.summary}"
    chat: list[ChatMessage] = [{"role": "system", "content": system}]
    for message in context.messages:
        if message.role == Role.ASSISTANT:
            chat.append({"role": "assistant", "content": message.content})
        else:
            chat.append({"role": "user", "content": _labelled(message)})
    return chat


def reply(session: Session) -> Message:
    """Append and return the agent's answer to the session's effective context.

    Raises ``LLMError`` (or the ``openai`` SDK's errors) when the endpoint fails; nothing is
    appended then. The model call runs outside any transaction this module opens.
    """
    context = turn_context(session)
    chat = prompt_messages(session, context)
    if llm_configured():
        return _reply_with_model(session, chat)
    text = _offline_text(session, context)
    usage = Usage(
        uncached_input=offline_prompt_tokens(context, chat),
        output=-(-len(text) // CHARS_PER_TOKEN),
    )
    return log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content=text,
        usage=usage,
        model=OFFLINE_MODEL,
    )


def complete(
    messages: list[ChatMessage],
    *,
    max_tokens: int,
    timeout: float,
    json_object: bool = False,
    purpose: str = "",
    model: str = "",
) -> ChatCompletion:
    """Make ONE chat.completions call (no tools) and return the completion.

    ``max_tokens`` bounds the answer (tokens), ``timeout`` the call (seconds). ``json_object``
    asks for a JSON object (``response_format``); ``purpose`` travels as the
    ``X-Handoff-Purpose`` header. Raises ``LLMUnavailable`` without an endpoint and the SDK's
    ``openai.OpenAIError`` subclasses on failure.
    """
    client = llm_client(timeout=timeout)
    options: dict[str, Any] = {}
    if json_object:
        options["response_format"] = {"type": "json_object"}
    if purpose:
        options["extra_headers"] = {"X-Handoff-Purpose": purpose}
    return client.chat.completions.create(
        model=model or llm_model(),
        messages=messages,  # type: ignore[arg-type]
        max_tokens=max_tokens,
        **options,
    )


def completion_text(completion: ChatCompletion) -> str:
    """Return the answer of ``completion``; raise ``LLMError`` when it is empty."""
    text = completion.choices[0].message.content if completion.choices else None
    if not text or not text.strip():
        raise LLMError("the model returned an empty answer")
    return text


def usage_of(completion: ChatCompletion) -> Usage | None:
    """Map a completion's usage onto the four buckets (tokens); None when it reports none.

    prompt minus cached → uncached input, cached → cache read, completion → output.
    """
    if completion.usage is None:
        return None
    details = completion.usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details else 0
    return Usage(
        uncached_input=max(completion.usage.prompt_tokens - cached, 0),
        output=completion.usage.completion_tokens,
        cache_read=cached,
    )


def context_window(model: str, session: Session | None = None) -> int:
    """Return ``model``'s context window in tokens from the host's table
    (``HOST_CONTEXT_WINDOWS``), else the session's; 0 unknown."""
    windows: dict[str, int] = settings.HOST_CONTEXT_WINDOWS
    return windows.get(model, 0) or (session.context_window if session else 0)


def prompt_window(session: Session, model: str) -> int:
    """Return the window (tokens; 0 unknown) that what is sent to ``model`` for ``session`` is
    fitted to: the one the conversation's context meter uses, as a plugin answers
    ``host.signals.session_window`` (the handoff's Settings first), else the host's table
    (``context_window``). docs/design.md, "Context fitting of the agent's model call"."""
    answers = session_window.send(sender=Session, session=session, model=model)
    answered = next((int(window) for _, window in answers if window), 0)
    return answered or context_window(model, session)


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt fitted to a budget: its ``messages``, how many entries were ``clipped`` (kept
    with a marker) and how many older ones ``dropped``, and the unfitted prompt's size
    (``full_tokens``, the meter's estimate)."""

    messages: list[ChatMessage]
    clipped: int = 0
    dropped: int = 0
    full_tokens: int = 0

    @property
    def cut(self) -> bool:
        """True when the model does not see the whole context."""
        return bool(self.clipped or self.dropped)


def clip_text(text: str, limit: int) -> str:
    """Return ``text`` cut to about ``limit`` characters: head and tail around a marker."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 2) // 2
    return f"{text[:keep]}{CLIP_MARKER.format(count=len(text) - 2 * keep)}{text[-keep:]}"


def fit_prompt(chat: list[ChatMessage], budget: int) -> FittedPrompt:
    """Fit the prompt to ``budget`` tokens without dropping history silently.

    First every conversation message larger than 1/``ENTRY_SHARE`` of the budget is clipped
    (head and tail kept around a marker), so one huge tool result no longer pushes out the
    messages before it; then, only if still too long, the oldest are dropped; the system
    message and the latest message are always kept (the latest clipped to fit). A budget of 0
    or less means unknown: nothing is cut.
    """
    full = estimate_tokens(chat)
    if budget <= 0 or full <= budget:
        return FittedPrompt(chat, full_tokens=full)
    system, rest = chat[0], list(chat[1:])
    limit = max(budget // ENTRY_SHARE, 1) * CHARS_PER_TOKEN
    clipped = [{**m, "content": clip_text(m["content"], limit)} for m in rest]
    count = sum(1 for a, b in zip(rest, clipped, strict=True) if a["content"] != b["content"])
    dropped = 0
    while len(clipped) > 1 and estimate_tokens([system, *clipped]) > budget:
        clipped.pop(0)
        dropped += 1
    if clipped and estimate_tokens([system, *clipped]) > budget:
        room = max(budget - estimate_tokens([system]), 1) * CHARS_PER_TOKEN
        clipped[-1] = {**clipped[-1], "content": clip_text(clipped[-1]["content"], room)}
        count += 1
    return FittedPrompt([system, *clipped], count, dropped, full)


def cut_notice(fitted: FittedPrompt, model: str, window: int) -> str:
    """The notice shown to the user when the model saw a cut history."""
    return (
        f"History cut to fit {model}'s {window:,}-token window: {fitted.clipped} oversized "
        f"entries clipped, {fitted.dropped} older entries left out. The context figure keeps "
        f"the full context (about {fitted.full_tokens:,} tokens), not the cut prompt."
    )


def _reply_with_model(session: Session, chat: list[ChatMessage]) -> Message:
    model = llm_model(session)
    window = prompt_window(session, model)
    fitted = fit_prompt(chat, window - REPLY_MAX_TOKENS if window else 0)
    completion = complete(
        fitted.messages, max_tokens=REPLY_MAX_TOKENS, timeout=REPLY_TIMEOUT, model=model
    )
    if fitted.cut:
        log.append_message(
            session,
            role=Role.SYSTEM,
            source_kind=SourceKind.SYSTEM,
            content=cut_notice(fitted, model, window),
        )
    return log.append_message(
        session,
        role=Role.ASSISTANT,
        source_kind=SourceKind.ASSISTANT,
        content=completion_text(completion),
        usage=usage_of(completion),
        model=completion.model or model,
        full_prompt=fitted.full_tokens if fitted.cut else None,
    )


def _labelled(message: Message) -> str:
    if message.role == Role.SYSTEM:
        return f"[system notice]\n{message.content}"
    if message.role == Role.TOOL:
        name = f": {message.tool_name}" if message.tool_name else ""
        return f"[tool result{name}]\n{message.content}"
    return message.content


# Every offline answer begins "Offline agent:": a plugin reading the log (the handoff's brief)
# may tell the agent's acknowledgements from work by it.
_OFFLINE_NOTE = "(No model is configured, so this is an offline acknowledgement.)"


def _offline_text(session: Session, context: EffectiveContext) -> str:
    """The offline agent's answer to the inputs of ``context`` after its last answer; a
    plugin's input is answered by the plugin's ``offline_reply`` receiver when it has one."""
    inputs = _latest_inputs(context.messages)
    if not inputs:
        return f"Offline agent: there is no new input to answer. {_OFFLINE_NOTE}"
    if inputs[-1].source_kind == SourceKind.PLUGIN:
        answers = offline_reply.send(sender=Session, session=session, content=inputs[-1].content)
        answer = next((str(text) for _, text in answers if text), "")
        if answer:
            return f"{answer} {_OFFLINE_NOTE}"
    if len(inputs) == 1:
        quoted = excerpt(inputs[0].content)
        return f"Offline agent: received your message “{quoted}”. {_OFFLINE_NOTE}"
    quoted = "; ".join(f"“{excerpt(m.content, 60)}”" for m in inputs)
    return f"Offline agent: received your {len(inputs)} messages: {quoted}. {_OFFLINE_NOTE}"


def _latest_inputs(messages: list[Message]) -> list[Message]:
    """The user messages after the agent's last answer, oldest first."""
    inputs: list[Message] = []
    for message in reversed(messages):
        if message.role == Role.ASSISTANT:
            break
        if message.role == Role.USER:
            inputs.insert(0, message)
    return inputs
