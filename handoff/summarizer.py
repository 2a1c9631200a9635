"""Step 6, summarize: one model call that writes the brief (seed 000, Brief schema).

The call goes through the LLM service: purpose ``compaction``, JSON only, no tools, no
user-facing answer, at most 6000 output tokens, a 180 s timeout. The prompt is built from the
effective context (what follows the last compaction) and trimmed so that prompt plus answer
never exceed the summary model's window. The answer is parsed with ``parse_brief``.

When the LLM service is the embedded offline model, ``offline_brief`` builds the brief from the
effective context without a model (DESIGN.md, run modes). With the service left out
(``HANDOFF_SERVICES["llm"] = None``) no brief can be written and the attempt fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from handoff import services
from handoff.core.brief import BRIEF_FIELDS, parse_brief, validate_brief
from handoff.exceptions import ServiceUnavailable

MAX_OUTPUT_TOKENS = 6000
TIMEOUT_SECONDS = 180.0
PURPOSE = "compaction"
# Window assumed when the summary model's is unknown (tokens): small, so the prompt fits.
UNKNOWN_WINDOW = 32_000
# Prompt sizing errs on the large side: three characters per token (the meter uses four).
CHARS_PER_TOKEN = 3
SAFETY_TOKENS = 1_000

SYSTEM_PROMPT = (
    "You write a handoff brief so that a fresh agent session can continue this work. "
    "Answer with one JSON object only: no prose, no Markdown, no code fence. Do not call or "
    "describe tools and do not answer the user. Fields: "
    + "; ".join(f'"{name}": {what}' for name, what in BRIEF_FIELDS.items())
    + '. "goal" is a non-empty string, every other field a list of short strings. Point at '
    "files by absolute path in artifacts instead of restating their content. Keep what was "
    "verified apart from what was merely done."
)
Entry = dict[str, str]


def summarize(session: Any, context: Sequence[Entry]) -> dict[str, Any]:
    """Return the validated brief for ``session`` from its effective ``context``.

    Raises ``ServiceUnavailable`` when the LLM service is left out, ``BriefError`` when the
    answer is not a valid brief, and whatever the LLM service raises (timeout, HTTP error).
    """
    llm = services.llm()
    if llm is None:
        raise ServiceUnavailable("llm", "no summary can be written, the source stays as it is")
    if llm.offline:
        return offline_brief(context, cwd=session.cwd)
    prompt = build_prompt(context, cwd=session.cwd, window=llm.window())
    text = llm.complete(
        system=SYSTEM_PROMPT,
        prompt=prompt,
        max_tokens=MAX_OUTPUT_TOKENS,
        timeout=TIMEOUT_SECONDS,
        purpose=PURPOSE,
    )
    return parse_brief(text)


def estimate_tokens(text: str) -> int:
    """Return a generous token estimate of ``text`` (tokens)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def render_entry(entry: Entry) -> str:
    """Render one log entry as ``[role/kind] content``."""
    kind = entry.get("source_kind", "")
    tool = f" {entry['tool_name']}" if entry.get("tool_name") else ""
    return f"[{entry.get('role', '')}/{kind}{tool}] {entry.get('content', '')}"


def build_prompt(context: Sequence[Entry], *, cwd: str, window: int) -> str:
    """Return the user prompt: the newest entries that fit ``window`` (tokens) with the answer.

    Older entries are dropped first (their number is stated); one entry too long on its own is
    cut to its end. Prompt + system prompt + 6000 answer tokens stay within the window.
    """
    window = window if window > 0 else UNKNOWN_WINDOW
    header = f"Working directory: {cwd or '(none)'}\nConversation since the last compaction:\n"
    budget = (
        window
        - MAX_OUTPUT_TOKENS
        - SAFETY_TOKENS
        - estimate_tokens(SYSTEM_PROMPT)
        - estimate_tokens(header)
        - 50
    )
    kept: list[str] = []
    used = 0
    for entry in reversed(context):
        text = render_entry(entry)
        cost = estimate_tokens(text) + 1
        if used + cost > budget:
            room = (budget - used) * CHARS_PER_TOKEN
            if not kept and room > 0:
                kept.append("…" + text[-(room - 1) :])
            break
        kept.append(text)
        used += cost
    dropped = len(context) - len(kept)
    note = f"({dropped} earlier entries omitted)\n" if dropped else ""
    return header + note + "\n".join(reversed(kept))


# --- the offline summarizer ------------------------------------------------------------------

ITEM_CHARS = 300
MAX_ITEMS = 12
MAX_ARTIFACTS = 60
_POSIX_PATH = re.compile(r"(?<![\w.:/~}$-])(/(?:[\w.@+~-]+/)+[\w.@+~-]*[\w@+~-])")
# Paths that say nothing about the work (devices, interpreters, system directories).
_SYSTEM_PATHS = ("/dev/", "/proc/", "/sys/", "/usr/", "/bin/", "/sbin/", "/lib/", "/etc/")
_HAS_EXTENSION = re.compile(r"\.\w{1,8}$")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\(?:[^\\\s\"'<>|:*?]+\\)*[^\\\s\"'<>|:*?]+")
_URL = re.compile(r"https?://[^\s<>\"'`)\]}{$]+(?![{$])")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_CONSTRAINT = re.compile(
    r"\b(must|never|always|only|don't|do not|dont|should not|shouldn't|avoid|without|"
    r"required?|make sure)\b|不要|必须|禁止|只能|务必",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(let's|lets|use|go with|instead|switch to|we'll|decided?|prefer|choose|keep)\b|改用|就用",
    re.IGNORECASE,
)
_PASSED = re.compile(r"\b(passed|passes|succeeded|successful(ly)?|all green)\b|✓|✔", re.I)
_PASSED_OK = re.compile(r"\bOK\b|^\s*ok\b")
# A line of file content as tools print it ("  192→ code"): never a verification.
_FILE_LINE = re.compile(r"^\s*\d+\s*(→|\t|:)")
_OBJECTIVE = re.compile(r"\b(request|requested|asked|goal|objective|task|intent)\b", re.I)
_PENDING = re.compile(
    r"\b(todo|pending|remaining|not yet|still|blocked|fails?|failing|failed|error|left to)\b",
    re.IGNORECASE,
)
_NEXT = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+|\b(next|then|will|going to|plan to)\b", re.I)
_UNSURE = re.compile(r"\?|\b(not sure|unclear|unknown|maybe|might|unverified|assume)\b", re.I)


def _is_user_text(entry: Entry) -> bool:
    content = entry.get("content", "").strip()
    return (
        entry.get("role") == "user"
        and entry.get("source_kind") in {"user", "relay"}
        and bool(content)
        and not content.startswith(("<", "/", "Caveat:"))
    )


def _is_tool_result(entry: Entry) -> bool:
    return entry.get("role") == "tool" or entry.get("source_kind") == "tool"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ITEM_CHARS else text[: ITEM_CHARS - 1] + "…"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and len(s.strip()) > 3]


def _unique(items: Iterable[str], limit: int = MAX_ITEMS) -> list[str]:
    return list(dict.fromkeys(_clip(i) for i in items if i.strip()))[:limit]


def find_artifacts(texts: Iterable[str]) -> list[str]:
    """Return the absolute file paths and URLs in ``texts``, most recent first, de-duplicated.

    System paths (``/dev/null``, ``/usr/bin/env`` …) and short extension-less paths (API
    routes such as ``/api/items``) are left out.
    """
    found: list[str] = []
    for text in texts:
        found += [m.rstrip(".,;:") for m in _URL.findall(text)]
        found += [p for p in _POSIX_PATH.findall(text) if _meaningful_path(p)]
        found += _WINDOWS_PATH.findall(text)
    recent_first = list(dict.fromkeys(reversed(found)))
    return [a for a in recent_first if len(a) > 3][:MAX_ARTIFACTS]


def _meaningful_path(path: str) -> bool:
    """A path worth pointing at: not a system path; a file name or at least three levels."""
    if path.startswith(_SYSTEM_PATHS):
        return False
    return bool(_HAS_EXTENSION.search(path)) or path.count("/") >= 3


def _objective_in(summary: str) -> str:
    """Return the line of a compaction summary that states the request (else its first)."""
    lines = [ln.strip(" \t-*#>").replace("**", "") for ln in summary.splitlines()]
    lines = [ln for ln in lines if ln]
    stated = next((ln for ln in lines if _OBJECTIVE.search(ln) and len(ln.split()) >= 3), "")
    return stated or (lines[0] if lines else "")


def _goal(users: Sequence[str], context: Sequence[Entry]) -> str:
    """The latest substantive user message; else the summary's request plus the latest one."""
    for text in reversed(users):
        if len(text.split()) >= 8 or len(text) >= 60:
            return _clip(text)
    summary = next((e["content"] for e in context if e.get("source_kind") == "compaction"), "")
    objective = _objective_in(summary)
    latest = users[-1] if users else ""
    if objective and latest:
        return _clip(f"{objective} (latest user message: {latest})")
    return _clip(objective or latest or "Continue the work of the previous session.")


def offline_brief(context: Sequence[Entry], *, cwd: str) -> dict[str, Any]:
    """Build a valid brief from the effective ``context`` without a model.

    goal: the latest substantive user message; decisions / constraints: user sentences with
    decision or imperative cues; artifacts: the workspace and every absolute path and URL that
    occurs; verified: tool results reporting passed / ok; pending and next steps: the latest
    assistant turns; uncertainties: open questions, plus a note that no model wrote the brief.
    """
    users = [e["content"].strip() for e in context if _is_user_text(e)]
    assistants = [e["content"] for e in context if e.get("role") == "assistant"]
    user_sentences = [s for text in users for s in _sentences(text)]
    latest = assistants[-3:]
    latest_sentences = [s for text in latest for s in _sentences(text)]
    last_lines = _sentences(assistants[-1]) if assistants else []
    verified = [
        s
        for e in context
        if _is_tool_result(e)
        for s in e.get("content", "").splitlines()
        if (_PASSED.search(s) or _PASSED_OK.search(s)) and not _FILE_LINE.match(s)
    ]
    goal = _goal(users, context)
    next_steps = _unique(s for s in last_lines if _NEXT.search(s)) or [
        f"Re-read the artifacts and continue: {goal}"
    ]
    artifacts = ([f"workspace: {cwd}"] if cwd else []) + find_artifacts(
        e.get("content", "") for e in context
    )
    brief = {
        "goal": goal,
        "decisions": _unique(s for s in user_sentences if _DECISION.search(s)),
        "constraints": _unique(s for s in user_sentences if _CONSTRAINT.search(s)),
        "artifacts": _unique(artifacts, MAX_ARTIFACTS),
        "verified": _unique(verified[-MAX_ITEMS:]),
        "pending": _unique(s for s in latest_sentences if _PENDING.search(s)),
        "next_steps": next_steps,
        "uncertainties": [
            *_unique((s for s in last_lines if _UNSURE.search(s)), MAX_ITEMS - 1),
            f"Written offline from the last {len(context)} log entries without a model: "
            "details may be missing, check the artifacts.",
        ],
    }
    return validate_brief(brief)
