"""The offline summarizer: a brief built from the log's digest without a model (DESIGN.md, run
modes; seed 000, Brief schema).

Each field comes from the structure of the log (``handoff.core.digest``), never from guesses:

- goal: the predecessor's goal, else the compaction summary's primary request, else the first
  substantive request; plus the latest direction the user gave;
- decisions: stated decisions ("Decision:", "we'll use…", "instead of…") and the predecessor's;
- constraints: user sentences that state rules ("only", "never", "must", "don't") and the
  predecessor's;
- artifacts: the workspace, then the files written or edited, last touched first, with what was
  done, then the files the compaction summary names;
- verified: commands run with a passing outcome (tests, builds, commits, pushes);
- pending: open items of the latest todo list, commands whose latest run failed, else the
  summary's pending tasks not reported closed since;
- next_steps: the current state (the last assistant message) and what comes next; a finished
  session says it is finished;
- uncertainties: what the log cannot tell, and that no model wrote the brief.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from handoff.core.brief import validate_brief
from handoff.core.digest import (
    Command,
    Digest,
    Entry,
    absolute,
    digest,
    is_generated_path,
    task_ids,
)
from handoff.core.digest import section as summary_section

ITEM_CHARS = 300
MAX_ITEMS = 12
MAX_ARTIFACTS = 40

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_RULE = re.compile(
    r"\b(only|never|must|always|don't|do not|dont|no longer|without|should not|shouldn't|"
    r"make sure|avoid)\b|不要|必须|禁止|只能|务必|しないで|ないでください",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\bdecision:|\b(decided|we'll use|we will use|i'll use|let's use|lets use|going with|"
    r"go with|instead of|rather than|switched to|chose|opted|in favou?r of|fall(?:ing)? back to|"
    r"established that)\b|改用|就用",
    re.IGNORECASE,
)
_FINISHED = re.compile(
    r"^\s*(?:\W{0,3})(all done|done|implemented|completed|finished|fixed)\b"
    r"|\b(all done|fully implemented"
    r"|(?:is|are) (?:now )?(?:complete|completed|finished|done|closed)"
    r"|has been (?:created|updated|implemented|completed|fixed|added)"
    r"|everything is (?:pushed|done|committed|complete))\b"
    r"|完了しました|完成しました|しました[。\s]",
    re.IGNORECASE | re.MULTILINE,
)
_NEXT_SENTENCE = re.compile(
    r"^(?:next(?: steps?)?\s*[:,—–-]|next,? i(?:'ll| will)\b|remaining\s*:|still to do\s*:)",
    re.IGNORECASE,
)
_GOING_ON = re.compile(r"\b(now let me|let me|next,? i|i'll now|i will now|then i'll)\b", re.I)
_SUMMARY_FILE = re.compile(r"^\s*[-*]\s+\*\*`([^`]+)`\*\*\s*[—–-]+\s*(.+)$", re.MULTILINE)
_MENTIONED_FILE = re.compile(r"(?<![\w.:/~-])(/(?:[\w.@+~-]+/)+[\w@+~-]+\.[A-Za-z]\w{0,7})\b")
_SYSTEM_DIRS = ("/dev/", "/proc/", "/sys/", "/usr/", "/bin/", "/sbin/", "/lib/", "/etc/", "/tmp/")
MAX_MENTIONED = 10
_QUOTED = re.compile(r"[\"“]([^\"”]{3,300})[\"”]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", re.MULTILINE)


def clip(text: str, limit: int = ITEM_CHARS) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.replace("**", "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def unique(items: Iterable[str], limit: int = MAX_ITEMS) -> list[str]:
    """Return the clipped, non-empty, distinct ``items`` in order, at most ``limit``.

    ``items`` is read only as far as needed: a generator past the ``limit``-th is left unread.
    """
    found: dict[str, None] = {}
    for item in items:
        if len(found) >= limit:
            break
        if item.strip():
            found.setdefault(clip(item))
    return list(found)


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences and lines (code blocks left out)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    return [s.strip(" -*#>") for s in _SENTENCE_END.split(text) if len(s.strip()) > 3]


def substantive(request: str) -> bool:
    """Return whether a request asks for work (not a short check such as "did you push?")."""
    text = request.strip()
    if text.endswith(("?", "？")):
        return False
    wide = sum(1 for ch in text if ord(ch) > 0x2E80)
    return len(text.split()) >= 3 or len(text) >= 20 or wide >= 8


def first_request(d: Digest) -> str:
    """The goal's start: the predecessor's goal, the summary's request, or the first request."""
    if d.predecessor.get("goal"):
        return str(d.predecessor["goal"]).split(" — latest direction: ")[0]
    primary = summary_section(d.summary, "primary request", "request")
    if primary:
        return clip(sentences(primary)[0])
    return next((r for r in d.requests if substantive(r)), d.requests[0] if d.requests else "")


def latest_direction(d: Digest, first: str) -> str:
    """The latest substantive request of the log (or quoted in the summary), if not ``first``."""
    said = _QUOTED.findall(summary_section(d.summary, "user messages"))
    latest = _last(d.requests, substantive) or _last(said, substantive)
    return "" if not latest or clip(latest) in clip(first) else latest


def goal_of(d: Digest) -> str:
    """First substantive request plus the latest direction (seed 000: the current objective)."""
    first = first_request(d)
    latest = latest_direction(d, first)
    if first and latest:
        return clip(f"{clip(first, 200)} — latest direction: {latest}", 600)
    return clip(first or latest or "Continue the work of the previous session.", 600)


def rules_of(d: Digest) -> list[str]:
    """User sentences that state rules, the predecessor's constraints first (the earliest
    ``MAX_ITEMS``; the log is read only until they are found)."""
    said = [*d.requests, *_QUOTED.findall(summary_section(d.summary, "user messages"))]
    stated = (
        s for text in said if _may_hold(_RULE, text) for s in sentences(text) if _RULE.search(s)
    )
    return unique(itertools.chain(d.predecessor.get("constraints", []), stated))


def decisions_of(d: Digest) -> list[str]:
    """Stated decisions of the user and the assistant, the predecessor's first, latest kept
    (the log is read from its end, only until enough are found)."""
    solved = [summary_section(d.summary, name) for name in ("problem solving", "errors and fixes")]
    inherited = list(d.predecessor.get("decisions", []))
    texts = [*solved, *d.requests, *d.assistant_texts]
    chosen: Iterable[str]
    if len(inherited) < MAX_ITEMS:
        latest_first = (
            s
            for text in reversed(texts)
            if _may_hold(_DECISION, text)
            for s in reversed(sentences(text))
            if _DECISION.search(s)
        )
        chosen = list(itertools.islice(latest_first, MAX_ITEMS - len(inherited)))[::-1]
    else:
        # A list of MAX_ITEMS or more may still repeat itself (``unique`` drops the repeats):
        # the log's decisions then fill the room from the first one, past the surplus, as
        # ``chosen[-(MAX_ITEMS - len(inherited)):]`` of every decision always did.
        in_order = (
            s
            for text in texts
            if _may_hold(_DECISION, text)
            for s in sentences(text)
            if _DECISION.search(s)
        )
        chosen = itertools.islice(in_order, len(inherited) - MAX_ITEMS, None)
    return unique(itertools.chain(inherited, chosen))


def _may_hold(pattern: re.Pattern[str], text: str) -> bool:
    """Whether a sentence of ``text`` may match ``pattern``: a sentence that matches is part of
    a text that matches, unless a code block ``sentences`` leaves out joined its words."""
    return "```" in text or pattern.search(text) is not None


def _last(items: Sequence[str], keep: Callable[[str], bool]) -> str:
    """The last of ``items`` that ``keep`` accepts, or "" (read from the end)."""
    return next((item for item in reversed(items) if keep(item)), "")


def _actions(actions: Sequence[str]) -> str:
    counts = Counter(actions)
    return ", ".join(f"{a} ×{counts[a]}" if counts[a] > 1 else a for a in dict.fromkeys(actions))


def artifacts_of(d: Digest, cwd: str) -> list[str]:
    """The workspace, the files touched (last first, with what was done), the summary's files."""
    items = [f"workspace: {cwd}"] if cwd else []
    items += [f"{t.path} — {_actions(t.actions)}" for t in d.files]
    listed = {t.path for t in d.files}
    for path, what in _SUMMARY_FILE.findall(summary_section(d.summary, "files")):
        full = absolute(path, cwd)
        if full not in listed and not is_generated_path(full) and "://" not in full:
            items.append(f"{full} — {clip(what, 160)} (before the last compaction)")
            listed.add(full)
    for item in d.predecessor.get("artifacts", []):
        path = str(item).split(" — ")[0]
        if path not in listed and not str(item).startswith("workspace: "):
            items.append(str(item))
            listed.add(path)
    if not listed:
        items += [f"{path} — mentioned by the assistant" for path in mentioned_files(d)]
    return unique(items, MAX_ARTIFACTS)


def mentioned_files(d: Digest) -> list[str]:
    """Absolute file paths the assistant's texts name, last named first (no system or build
    paths); the artifacts when the log holds no file edits."""
    named = [p for text in d.assistant_texts for p in _MENTIONED_FILE.findall(text)]
    kept = [p for p in reversed(named) if not p.startswith(_SYSTEM_DIRS)]
    return list(dict.fromkeys(p for p in kept if not is_generated_path(p)))[:MAX_MENTIONED]


def _shown(command: Command) -> str:
    line = command.text.splitlines()[0] if command.text else ""
    return f"`{clip(line, 120)}` → {command.outcome}"


def verified_of(d: Digest) -> list[str]:
    """Commands whose latest run passed, oldest first, the latest ``MAX_ITEMS``."""
    latest = {c.text: c for c in d.commands}
    own = [_shown(c) for c in latest.values() if c.ok]
    return unique([*d.predecessor.get("verified", []), *own][-MAX_ITEMS:])


def finished(d: Digest) -> bool:
    """The assistant reports the work finished since the latest request and goes on no further."""
    if not d.texts_after_request:
        return False
    last = d.texts_after_request[-1]
    return any(_FINISHED.search(t) for t in d.texts_after_request) and not _GOING_ON.search(last)


def pending_of(d: Digest, done: bool) -> list[str]:
    """Open todo items, failing commands, else the summary's open tasks not closed since."""
    items = []
    open_todos = [t for t in d.todos if t.status != "completed" and t.text not in d.done_tasks]
    note = " — left open in the last plan update; the final message reports the work done"
    items += [f"{t.text} ({t.status}{note if done else ''})" for t in open_todos]
    latest = {c.text: c for c in d.commands}
    items += [f"{_shown(c)} (its latest run failed)" for c in latest.values() if c.ok is False]
    if not d.todos and not done:
        tasks = _BULLET.findall(summary_section(d.summary, "pending"))
        items += [t for t in tasks if not task_ids(t) & d.closed]
        items += [str(t) for t in d.predecessor.get("pending", [])]
    return unique(items)


def next_steps_of(d: Digest, done: bool, pending: list[str]) -> list[str]:
    """The current state (the last assistant message, else the summary's current work) and
    what comes next (the task in progress, else the summary's next step)."""
    last = d.assistant_texts[-1] if d.assistant_texts else ""
    work = summary_section(d.summary, "current work")
    state = f"Current state (the last assistant message): “{clip(last, 240)}”" if last else ""
    if not last and work:
        state = f"Current state (the compaction summary): {clip(' '.join(sentences(work)[:2]))}"
    if done:
        left = " After that, check the items under Pending." if pending else ""
        return unique(
            [
                "The session reports its work finished; wait for the user's next request." + left,
                state,
            ]
        )
    doing = [f"Continue: {t.text}" for t in d.todos if t.status == "in_progress"]
    step = summary_section(d.summary, "next step")
    if not doing and step and not d.assistant_texts:
        doing = [clip(" ".join(sentences(step)[:2]))]
    stated = [f"As the last assistant message says: {clip(t)}" for t in stated_next(last)]
    steps = [*doing, *stated, state]
    if not doing and not stated:
        steps += [str(t) for t in d.predecessor.get("next_steps", [])[:1]]
    return unique(steps) or ["Continue from the goal and the artifacts."]


def stated_next(text: str) -> list[str]:
    """The sentences of ``text`` that say what comes next ("Next: …", "Next I will …",
    "Remaining: …")."""
    return [s for s in sentences(text) if _NEXT_SENTENCE.match(s)]


def uncertainties_of(d: Digest, count: int) -> list[str]:
    """What the log cannot tell; always ends with the note that no model wrote the brief."""
    items = []
    if d.summary:
        items.append("Work before the last compaction is known only from its summary.")
    if d.failed_edits:
        items.append(f"{d.failed_edits} file edit(s) in the log failed and changed nothing.")
    last = d.assistant_texts[-1] if d.assistant_texts else ""
    items += [s for s in sentences(last) if s.endswith("?")]
    items = unique(items, MAX_ITEMS - 1)
    items.append(
        f"Written offline from the last {count} log entries without a model: details may be "
        "missing, check the artifacts."
    )
    return items


def offline_brief(context: Sequence[Entry], *, cwd: str) -> dict[str, Any]:
    """Build a valid brief from the effective ``context`` (oldest first) without a model."""
    d = digest(context, cwd=cwd)
    done = finished(d)
    pending = pending_of(d, done)
    brief = {
        "goal": goal_of(d),
        "decisions": decisions_of(d),
        "constraints": rules_of(d),
        "artifacts": artifacts_of(d, cwd),
        "verified": verified_of(d),
        "pending": pending,
        "next_steps": next_steps_of(d, done, pending),
        "uncertainties": uncertainties_of(d, len(context)),
    }
    return validate_brief(brief)
