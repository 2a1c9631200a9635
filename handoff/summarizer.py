"""Step 6, summarize: one model call that writes the brief (docs/spec.md, Brief).

The call goes through the LLM service: purpose ``compaction``, JSON only, no tools, no
user-facing answer, at most 6000 output tokens, a 180 s timeout. The prompt is built from the
effective context (what follows the last compaction): first its structured digest (the brief
the offline summarizer builds from the log's structure, ``handoff.core.offline_brief``: the same
facts, each citing its log entry), capped at ``DIGEST_SHARE`` of the prompt budget (the call
happens at 75 % of the window, so the digest must leave room; items cut are stated), then the
entries themselves, each with its log entry number, fitted so that prompt plus answer never
exceed the summary model's window. The system prompt asks for the user's rules verbatim and for
verified kept apart from claimed and says what each field means (``VERIFIED_MEANS``: verified
only from success, files as they stand, failed attempts no decisions, open only what nothing
closed).
Fitting never drops history silently: an oversized entry (a huge tool result) is clipped with a
marker first, older entries are kept while they fit, and what was cut is stated in the prompt and
added to the brief's uncertainties. The answer is parsed with ``parse_brief``.

When the LLM service is the embedded offline model, ``offline_brief`` builds the brief from the
effective context without a model (docs/operations.md, Real mode); ``summarize_session`` builds it
from the session's kept digest (``handoff.digest.per_session``), the same brief in about
constant time. With the service left out (``HANDOFF_SERVICES["llm"] = None``) no brief can be
written and the attempt fails here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_noop

from handoff import degradation, services
from handoff.core.brief import BRIEF_FIELDS, LIST_FIELDS, parse_brief, validate_brief
from handoff.core.offline_brief import offline_brief
from handoff.digest import per_session

MAX_OUTPUT_TOKENS = 6000
TIMEOUT_SECONDS = 180.0
PURPOSE = "compaction"
# Window assumed when the summary model's is unknown (tokens): small, so the prompt fits.
UNKNOWN_WINDOW = 32_000
# Prompt sizing errs on the large side: three characters per token (the meter uses four).
CHARS_PER_TOKEN = 3
SAFETY_TOKENS = 1_000

# What the brief's fields mean, told to the model as the offline brief applies it
# (docs/design.md, "Verified means it passed").
VERIFIED_MEANS = (
    "Verified means the log shows it passed: the runtime did not flag the result as an error "
    "(entries marked [… error]), the exit status is 0 where one is shown, and a linter, type "
    "checker or test run printed no findings or failures; a check piped through tail, grep "
    "or head counts only by what it printed, and one whose outcome is not shown goes to "
    'uncertainties as "ran, outcome not shown: …". A commit a hook rejected is no commit. '
    "A check that failed earlier and passed later is verified by the passing run; one followed "
    'by edits to files it covers says so ("…, before later edits to X (log #N)"). What the '
    "final report says a feature does, with nothing in the log running or testing it, is "
    'an uncertainty ("claimed, not shown in the log: …"), not done. Artifacts are the files '
    "as they stand at the end: a moved file under its new path, deleted files left out unless "
    "a later commit did not take the deletion, files only read or unchanged left out, staged "
    "or committed as the log shows. "
    "Decisions are choices made: attempts that failed and options rejected go to "
    'uncertainties as "tried, did not work: …". Pending holds only what nothing later in the '
    "log closed, each item saying why it is open, and follow-ups filed at the end with their id."
)
SYSTEM_PROMPT = (
    "You write a handoff brief so that a fresh agent session can continue this work. "
    "Answer with one JSON object only: no prose, no Markdown, no code fence. Do not call or "
    "describe tools and do not answer the user. Fields: "
    + "; ".join(f'"{name}": {what}' for name, what in BRIEF_FIELDS.items())
    + '. "goal" is a non-empty string, every other field a list of short strings. Point at '
    "files by absolute path in artifacts instead of restating their content. Copy the user's "
    "rules and answers into constraints and decisions verbatim, word for word. Keep what was "
    "verified apart from what was merely claimed: verified lists only what a command's output "
    "in the log shows; a success the assistant only stated goes to uncertainties as "
    '"stated, not verified: …". Keep the "(log #N)" that names the log entry behind each '
    "verified item, decision and rule; a claim with no entry to name is not verified. "
    + VERIFIED_MEANS
)
# The digest may take at most this share of the prompt budget (tokens); the entries get the rest.
DIGEST_SHARE = 3
# One entry may take at most this share of the prompt budget before it is clipped.
ENTRY_SHARE = 8
CLIP_MARKER = "[… {count} characters clipped …]"
Entry = dict[str, Any]


@dataclass(frozen=True)
class SummaryPrompt:
    """The summary call's user prompt and what fitting it cut: entries ``clipped`` (kept
    with a marker) and older entries ``dropped`` (their number is stated in ``text``)."""

    text: str
    clipped: int = 0
    dropped: int = 0

    @property
    def notice(self) -> str:
        """The user-visible note on what was cut ("" when nothing was)."""
        if not (self.clipped or self.dropped):
            return ""
        return (
            f"The summary model saw a cut history: {self.clipped} oversized entries clipped, "
            f"{self.dropped} older entries left out to fit its window; the digest covers them."
        )


def summarize_session(session: Any, host: Any) -> dict[str, Any]:
    """Return the validated brief for ``session`` read through ``host`` (the session
    controller): with the embedded offline model, from the session's kept digest and the
    entries after it (``handoff.digest.per_session``: the time does not grow with the
    log); else ``summarize`` over its whole effective context. Raises as ``summarize`` does."""
    llm = services.llm()
    if llm is not None and llm.offline:
        return per_session.brief(session, host)
    return summarize(session, host.effective_context(session))


def summarize(session: Any, context: Sequence[Entry]) -> dict[str, Any]:
    """Return the validated brief for ``session`` from its effective ``context``.

    Raises ``ServiceUnavailable`` when the LLM service is left out, ``BriefError`` when the
    answer is not a valid brief, and whatever the LLM service raises (timeout, HTTP error).
    """
    llm = degradation.require(
        services.llm(),
        degradation.LLM,
        gettext_noop("no summary can be written, the source stays as it is"),
    )
    if llm.offline:
        return offline_brief(context, cwd=session.cwd)
    prompt = build_prompt(context, cwd=session.cwd, window=llm.window())
    text = llm.complete(
        system=SYSTEM_PROMPT,
        prompt=prompt.text,
        max_tokens=MAX_OUTPUT_TOKENS,
        timeout=TIMEOUT_SECONDS,
        purpose=PURPOSE,
    )
    brief = parse_brief(text)
    if prompt.notice:
        brief["uncertainties"] = [*brief["uncertainties"], prompt.notice]
        brief = validate_brief(brief)
    return brief


def generous_tokens(text: str) -> int:
    """Return a generous token estimate of ``text`` for sizing the prompt (tokens).

    Three characters per token, erring on the large side; not the meter's estimate
    (``host.agent.estimate_tokens``, four characters per token).
    """
    return -(-len(text) // CHARS_PER_TOKEN)


def render_entry(entry: Entry) -> str:
    """Render one log entry as ``[#seq role/kind tool flag] content`` (``#seq`` when it has
    one; ``flag`` the runtime's report on a tool result: ``error`` or ``ok``, none unsaid)."""
    kind = entry.get("source_kind", "")
    tool = f" {entry['tool_name']}" if entry.get("tool_name") else ""
    seq = f"#{entry['seq']} " if entry.get("seq") else ""
    error = entry.get("tool_error")
    flag = "" if error is None else (" error" if error else " ok")
    return f"[{seq}{entry.get('role', '')}/{kind}{tool}{flag}] {entry.get('content', '')}"


def capped_digest(brief: dict[str, Any], limit: int) -> tuple[str, int]:
    """Return the digest ``brief`` as JSON of at most ``limit`` characters and how many list
    items were left out: the last item of the longest list goes first, then the goal is cut."""
    digest = {
        name: list(value) if isinstance(value, list) else value for name, value in brief.items()
    }
    left_out = 0
    text = json.dumps(digest, ensure_ascii=False, indent=1)
    while len(text) > limit and any(isinstance(v, list) and v for v in digest.values()):
        longest = max(LIST_FIELDS, key=lambda name: len(json.dumps(digest[name])))
        digest[longest].pop()
        left_out += 1
        text = json.dumps(digest, ensure_ascii=False, indent=1)
    if len(text) > limit:
        digest["goal"] = str(digest["goal"])[: max(limit - len(text) + len(digest["goal"]), 0)]
        text = json.dumps(digest, ensure_ascii=False, indent=1)
    return text, left_out


def clip_entry(text: str, limit: int) -> str:
    """Return ``text`` cut to about ``limit`` characters: its head and tail around a marker."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 2)
    head, tail = text[: keep // 2], text[len(text) - keep // 2 :]
    return f"{head}{CLIP_MARKER.format(count=len(text) - 2 * (keep // 2))}{tail}"


def build_prompt(context: Sequence[Entry], *, cwd: str, window: int) -> SummaryPrompt:
    """Return the user prompt: the digest, then the entries that fit ``window`` (tokens).

    Each entry longer than 1/``ENTRY_SHARE`` of the budget is clipped with a marker; then, if
    the entries still do not fit, the oldest are left out and their number is stated.
    Prompt + system prompt + 6000 answer tokens stay within the window (0 = unknown: 32 000).
    """
    window = window if window > 0 else UNKNOWN_WINDOW
    room = window - MAX_OUTPUT_TOKENS - SAFETY_TOKENS - generous_tokens(SYSTEM_PROMPT) - 50
    digest, left_out = capped_digest(
        offline_brief(context, cwd=cwd), max(room // DIGEST_SHARE, 0) * CHARS_PER_TOKEN
    )
    cut = f" ({left_out} items left out to fit the window)" if left_out else ""
    header = (
        f"Working directory: {cwd or '(none)'}\n"
        "Digest parsed from the log's structure (the files as they stand at the end, todo "
        "list, commands and their outcomes with the runtime's error flags, what later closed "
        "what, requests, the user's rules and answers); every item is in the log, "
        f'"(log #N)" names its entry{cut}:\n{digest}\n\n'
        "Conversation since the last compaction, each entry as [#N role/kind]:\n"
    )
    budget = room - generous_tokens(header) - 120
    limit = max(budget // ENTRY_SHARE, 1) * CHARS_PER_TOKEN
    context = [entry for entry in context if not entry.get("compacted")]  # in the digest only
    rendered = [render_entry(entry) for entry in context]
    fitted = [clip_entry(text, limit) for text in rendered]
    clipped = sum(1 for a, b in zip(rendered, fitted, strict=True) if a is not b)
    kept: list[str] = []
    used = 0
    for text in reversed(fitted):
        cost = generous_tokens(text) + 1
        if used + cost > budget:
            break
        kept.append(text)
        used += cost
    dropped = len(context) - len(kept)
    note = f"({dropped} earlier entries omitted to fit the window)\n" if dropped else ""
    return SummaryPrompt(header + note + "\n".join(reversed(kept)), clipped, dropped)
