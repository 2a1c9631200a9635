"""The offline summarizer: a brief built from the log's digest without a model (DESIGN.md, run
modes; seed 000, Brief schema; issue 16: done told from open, evidence cited).

Each field comes from the structure of the log (``handoff.core.digest``), never from guesses,
and each verified item, decision and user rule names the log entry it comes from, "… (log #N)"
(items inherited from a predecessor's brief say "(earlier log #N)": that entry is in the
predecessor's log):

- goal: the predecessor's goal, else the compaction summary's primary request, else the first
  substantive request; plus the latest direction the user gave;
- decisions: the user's answers to the agent's questions ("question → answer"), stated
  decisions ("Decision:", "we'll use…", "instead of…") and the predecessor's;
- constraints: user sentences and answers that state rules ("only", "never", "must", "don't",
  "max 7", "twice") and the predecessor's;
- artifacts: the workspace, then the files written, edited or committed, last touched first,
  with what was done, then the files the compaction summary names;
- verified: commands run with a passing outcome (tests, builds, commits, pushes); a command
  with no log entry to cite is not verified;
- pending: open items of the latest todo list, failures no later run of the same intent closed
  (``digest.covers``), work the assistant states is not done yet in the last two exchanges,
  else the summary's pending tasks no closing signal closed since; empty for a finished session,
  whose leftovers go to uncertainties;
- next_steps: the current state (the last assistant message) and what comes next; a finished
  session says first that it is finished and that the successor waits for the next request;
- uncertainties: what the log cannot tell: successes stated only in prose ("stated, not
  verified: …"), leftovers of a finished session, and that no model wrote the brief.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from handoff.core.brief import validate_brief
from handoff.core.digest import (
    SYSTEM_DIRS,
    Command,
    Digest,
    Entry,
    Said,
    absolute,
    closes,
    covers,
    digest,
    is_generated_path,
    mentions,
    only_stages,
    task_ids,
)
from handoff.core.digest import section as summary_section

ITEM_CHARS = 300
MAX_ITEMS = 12
MAX_ARTIFACTS = 40

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
# A line's list or quote marker ("- ", "* ", "> ", "## "), not an option's dashes ("--days").
_MARKER = re.compile(r"^(?:[-*>#]+\s+)+|^\*\*")
_RULE = re.compile(
    r"\b(only|never|must|always|don't|do not|dont|no longer|without|should not|shouldn't|"
    r"make sure|avoid|max|maximum|at most|at least|no more than|twice|\d+ times|each|keep|"
    r"on (?:its|their) own|(?<=\W)no(?!,))\b"
    r"|不要|必须|禁止|只能|务必|しないで|ないでください",
    re.IGNORECASE,
)
# Each match of ``_RULE`` / ``_DECISION`` holds one of these words (lower case): texts without
# any are not searched (issue 17, item 5: the summary's cost at 5 000 messages).
_RULE_WORDS = (
    "only", "never", "must", "always", "don't", "do not", "dont", "no longer", "without",
    "should not", "shouldn't", "make sure", "avoid", "max", "at most", "at least",
    "no more than", "twice", " times", "each", "keep", "on its own", "on their own", "no",
    "不要", "必须", "禁止", "只能", "务必", "しないで",
    "ないでください",
)  # fmt: skip
_DECISION_WORDS = (
    "decision:", "decided", "'ll use", "will use", "let's use", "lets use", "go with",
    "going with", "instead of", "rather than", "switched to", "chose", "opted", "in favo",
    "fall back to", "falling back to", "established that", "treating", "i kept", "i've kept",
    "改用", "就用",
)  # fmt: skip
# A choice the user states in a later request ("leave plot.py for now"); with ``_RULE`` the
# user's later directions are accepted corrections (decisions) too.
_USER_CHOICE = re.compile(r"\b(?:for now|leave|keep|instead|switch)\b", re.IGNORECASE)
_USER_CHOICE_WORDS = ("for now", "leave", "keep", "instead", "switch")
_DECISION = re.compile(
    r"\bdecision:|\b(decided|we'll use|we will use|i'll use|let's use|lets use|going with|"
    r"go with|instead of|rather than|switched to|chose|opted|in favou?r of|fall(?:ing)? back to|"
    r"established that|treating|i(?:'ve)? kept)\b|改用|就用",
    re.IGNORECASE,
)
_FINISHED = re.compile(
    r"^\s*(?:\W{0,3})(all done|done|implemented|completed|finished|fixed)\b"
    r"|\b(all done|fully implemented"
    r"|(?:is|are) (?:now )?(?:complete|completed|finished|done|closed)"
    r"|has been (?:created|updated|implemented|completed|fixed|added)"
    r"|everything is (?:pushed|done|committed|complete))\b"
    r"|\b(?:complete|completed|done|finished)(?: and (?:pushed|committed|merged|closed))?\W*$"
    r"|完了しました|完成しました|しました[。\s]",
    re.IGNORECASE | re.MULTILINE,
)
# A sentence that says the work is not (yet) finished, or finished only under a condition.
_UNFINISHED = re.compile(r"\b(?:not|never|almost|nearly|once|when|until|after|if)\b|n't\b", re.I)
# Work the assistant states is not done yet ("… are not written yet", "Still open: …").
_NOT_DONE = re.compile(
    r"\bnot\b[^.;,]{0,40}?\byet\b|\bstill (?:open|to do|missing|pending|failing)\b"
    r"|\bnothing (?:is|has been) (?:committed|pushed|done)\b"
    r"|\b(?:remaining|to ?do|left to do)\s*:|\bhas not been\b|\bhave not been\b",
    re.IGNORECASE,
)
# A success the assistant states ("12 tests pass", "the build succeeds", "it works now").
_CLAIMED = re.compile(
    r"\btests?\b[^.;:]{0,40}?\bpass(?:es|ed|ing)?\b|\btests? (?:are )?green\b"
    r"|\bbuild (?:succeeds|succeeded|passes|is clean)\b|\bworks (?:now|correctly|as expected)\b"
    r"|\bverified\b|\b(?:checked|confirmed|made sure) that\b|\bready (?:for|to) use\b"
    r"|^(?:it|this|the \w+)(?: now| also)* (?:handles|supports)\b",
    re.IGNORECASE,
)
# A claim of a check the assistant ran itself: backed only by a command it names.
_CHECKED = re.compile(r"\b(?:checked|confirmed|made sure) that\b", re.IGNORECASE)
# A statement that leans on the sentence before it ("It is not committed yet").
_PRONOUN = re.compile(r"^(?:it|this|that|they|these|those)\b", re.IGNORECASE)
# A summary's task that opens with its id: "E-1 (EPIC): …", "**spotter-gqc.6** (in_progress): …".
_TASK_ID = re.compile(r"^[*`\s]*([A-Za-z][\w]*(?:[.-][\w]+)+)[*`]*\s*(?:\(|:)")
_CITED = re.compile(r"\((earlier |older )?log #(\d+)\)")
# How an answer to the agent's question reads (``digest``: "question → answer").
ANSWERED = " → "
# The source an item names at its end: "(log #N)", "(earlier log #N)", "(compaction summary)".
_CITATION = re.compile(r" \((?:(?:earlier |older )?log #\d+|compaction summary)\)$")
_NEXT_SENTENCE = re.compile(
    r"^(?:next(?: steps?)?\s*[:,—–-]|next,? i(?:'ll| will)\b|remaining\s*:|still to do\s*:)",
    re.IGNORECASE,
)
_GOING_ON = re.compile(r"\b(now let me|let me|next,? i|i'll now|i will now|then i'll)\b", re.I)
# A file bullet of the summary's files section: "- **`path`** — what", "- `path`: what", "- path".
_SUMMARY_FILE = re.compile(
    r"^\s{0,4}[-*]\s+(?:\*\*)?`?([\w./@+~-]*[\w@+~-]\.[A-Za-z]\w{0,7})`?(?:\*\*)?"
    r"(?:\s*(?:[—–:-]+\s*)?(.*))?$",
    re.MULTILINE,
)
_MENTIONED_FILE = re.compile(r"(?<![\w.:/~-])(/(?:[\w.@+~-]+/)+[\w@+~-]+\.[A-Za-z]\w{0,7})\b")
MAX_MENTIONED = 10
_QUOTED = re.compile(r"[\"“]([^\"”]{3,300})[\"”]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", re.MULTILINE)


def clip(text: str, limit: int = ITEM_CHARS) -> str:
    """Return ``text`` on one line, cut to at most ``limit`` characters at a sentence end, else
    at a word boundary, with an ellipsis (a word longer than the limit is cut inside)."""
    text = " ".join(text.replace("**", "").split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(head) if m.start() >= limit // 2]
    if ends:
        return head[: ends[-1]].rstrip() + " …"
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip(" ,;:") + "…"


def cited(text: str, seq: int) -> str:
    """Return ``text`` (clipped) naming its log entry: "… (log #1485)" (issue 16, evidence)."""
    suffix = f" (log #{seq})"
    return clip(text, ITEM_CHARS - len(suffix)) + suffix


def inherited(items: Iterable[object]) -> list[str]:
    """A predecessor's items, their "(log #N)" marked as "(earlier log #N)": the entry is in
    the predecessor's log, not in this one; one already "earlier" becomes "(older log #N)"
    (further back than the predecessor's source, so no page links it)."""
    return [_CITED.sub(_further_back, str(item)) for item in items]


def _further_back(cited: re.Match[str]) -> str:
    return f"({'older' if cited[1] else 'earlier'} log #{cited[2]})"


def unique(items: Iterable[str], limit: int = MAX_ITEMS, *, claims: bool = False) -> list[str]:
    """Return the clipped, non-empty, distinct ``items`` in order, at most ``limit``;
    ``claims``: items that say the same but cite another entry are the same (the first kept:
    a rule the user repeated is listed once).

    ``items`` is read only as far as needed: a generator past the ``limit``-th is left unread.
    """
    found: dict[str, str] = {}
    for item in items:
        if len(found) >= limit:
            break
        if item.strip():
            kept = clip(item)
            found.setdefault(uncited(kept) if claims else kept, kept)
    return list(found.values())


def uncited(item: str) -> str:
    """``item`` without the entry it cites at its end."""
    return _CITATION.sub("", item)


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences and lines (code blocks left out)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    said = (_MARKER.sub("", s.strip()).rstrip(" *#") for s in _SENTENCE_END.split(text))
    return [s for s in said if len(s) > 3]


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
    """User sentences and answers that state rules, each citing its entry, the predecessor's
    constraints first (the earliest ``MAX_ITEMS``; the log is read only until they are found).
    Rules of the compaction summary's primary request and of the user messages it quotes cite
    the summary: after a compaction the request that set them is only there."""
    quoted = _QUOTED.findall(summary_section(d.summary, "user messages"))
    primary = summary_section(d.summary, "primary request")
    # The summary's request and messages came first.
    said = [*(Said(q) for q in [primary, *quoted] if q), *d.requests]
    stated = (
        _cite_or_summary(s, text.seq)
        for text in said
        if _may_hold(_RULE_WORDS, text)
        for s in sentences(text)
        if _RULE.search(s)
    )
    answered = (cited(a, a.seq) for a in d.answers if _RULE.search(a.split(" → ", 1)[-1]))
    return unique(
        itertools.chain(inherited(d.predecessor.get("constraints", [])), answered, stated),
        claims=True,
    )


def without_rules(decisions: list[str], constraints: list[str]) -> list[str]:
    """Return ``decisions`` without the rules ``constraints`` already lists (the same text,
    whatever entry each cites): a rule is listed once, as a constraint. The user's answer to
    the agent's question ("question → answer") stays in both: the option chosen is a decision,
    the rule it states a constraint (seed 000, Brief schema; issue 16)."""
    rules = {uncited(rule) for rule in constraints}
    return [item for item in decisions if ANSWERED in item or uncited(item) not in rules]


def _cite_or_summary(sentence: str, seq: int) -> str:
    return cited(sentence, seq) if seq else f"{sentence} (compaction summary)"


def decisions_of(d: Digest) -> list[str]:
    """The user's answers to the agent's questions, the user's later directions that state a
    rule or choice (accepted corrections: "leave plot.py for now", "retry twice"), and stated
    decisions of the user and the assistant, each citing its entry, the predecessor's first,
    latest kept (the log is read from its end, only until enough are found)."""
    solved = [summary_section(d.summary, name) for name in ("problem solving", "errors and fixes")]
    answers = [cited(a, a.seq) for a in d.answers]
    inherited_ = [*inherited(d.predecessor.get("decisions", [])), *answers]
    # After a compaction or a handoff the first request in the log is a later one too.
    later = {id(r) for r in d.requests[0 if d.summary or d.predecessor else 1 :]}
    texts = [*(Said(text) for text in solved), *d.requests, *d.plan_notes, *d.assistant_texts]
    chosen: Iterable[str]
    if len(inherited_) < MAX_ITEMS:
        latest_first = (
            _cite_or_summary(s, text.seq)
            for text in reversed(texts)
            for s in reversed(_decisions_in(text, id(text) in later))
        )
        chosen = list(itertools.islice(latest_first, MAX_ITEMS - len(inherited_)))[::-1]
    else:
        # A list of MAX_ITEMS or more may still repeat itself (``unique`` drops the repeats):
        # the log's decisions then fill the room from the first one, past the surplus, as
        # ``chosen[-(MAX_ITEMS - len(inherited)):]`` of every decision always did.
        in_order = (
            _cite_or_summary(s, text.seq)
            for text in texts
            for s in _decisions_in(text, id(text) in later)
        )
        chosen = itertools.islice(in_order, len(inherited_) - MAX_ITEMS, None)
    return unique(itertools.chain(inherited_, chosen))


def _decisions_in(text: str, later_request: bool) -> list[str]:
    """The sentences of ``text`` that state a decision; of a later request of the user, also
    those that state a rule or a choice."""
    if later_request and _may_hold(_DECISION_WORDS + _RULE_WORDS + _USER_CHOICE_WORDS, text):
        return [
            s
            for s in sentences(text)
            if _DECISION.search(s) or _RULE.search(s) or _USER_CHOICE.search(s)
        ]
    if _may_hold(_DECISION_WORDS, text):
        return [s for s in sentences(text) if _DECISION.search(s)]
    return []


def _may_hold(words: Sequence[str], text: str) -> bool:
    """Whether a sentence of ``text`` may hold one of ``words`` (lower case): a sentence that
    does is part of a text that does, unless a code block ``sentences`` leaves out joined it."""
    if "```" in text:
        return True
    low = text.lower()
    return any(word in low for word in words)


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
            said = f"{clip(what, 160)} " if what.strip() else ""
            items.append(f"{full} — {said}(before the last compaction)")
            listed.add(full)
    for item in inherited(d.predecessor.get("artifacts", [])):
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
    found: dict[str, None] = {}
    for text in reversed(d.assistant_texts):  # read from the end, only until enough are found
        named = reversed(_MENTIONED_FILE.findall(text)) if "/" in text else ()
        for path in named:
            if not path.startswith(SYSTEM_DIRS) and not is_generated_path(path):
                found.setdefault(path)
        if len(found) >= MAX_MENTIONED:
            break
    return list(found)[:MAX_MENTIONED]


def _shown(command: Command) -> str:
    line = command.text.splitlines()[0] if command.text else ""
    return f"`{clip(line, 120)}` → {command.outcome}"


def _latest_runs(d: Digest) -> list[Command]:
    """Each command's latest run, in the order of those runs."""
    return sorted({c.text: c for c in d.commands}.values(), key=lambda c: c.index)


def verified_of(d: Digest) -> list[str]:
    """Commands whose latest run passed, each citing the entry with its outcome, oldest first,
    the latest ``MAX_ITEMS``; a run with no entry to cite, or one that only stages files
    (``git add``), is not verified."""
    own = [
        cited(_shown(c), c.seq)
        for c in _latest_runs(d)
        if c.ok and c.seq and not only_stages(c.text)
    ]
    return unique([*inherited(d.predecessor.get("verified", [])), *own][-MAX_ITEMS:])


def open_failures(d: Digest) -> list[Command]:
    """Failed runs that no later passing run of the same intent closed (``digest.covers``: the
    same command head on the same target or more)."""
    runs = d.commands
    return [
        c
        for i, c in enumerate(runs)
        if c.ok is False
        and not any(later.ok and covers(later, c) for later in runs[i + 1 :])
        and c.text not in {later.text for later in runs[i + 1 :]}
    ]


def finished(d: Digest) -> bool:
    """The assistant reports the work finished since the latest request and goes on no further
    (any sentence that says so, not one phrasing; "not done", "once done" do not count); or,
    its answer missing (``Digest.answer_missing``), every tool run of the latest request
    succeeded and nothing is left open."""
    if not d.texts_after_request:
        return d.answer_missing and not leftovers(d)
    last = d.texts_after_request[-1]
    said = (s for text in d.texts_after_request for s in sentences(text))
    return any(_FINISHED.search(s) and not _UNFINISHED.search(s) for s in said) and not (
        _GOING_ON.search(last)
    )


def recent_texts(d: Digest) -> list[Said]:
    """The assistant's last text of each of the last two exchanges (the latest request's and
    the one before): what each exchange concluded, not superseded yet by a later one (an
    earlier text of an exchange is superseded by its last)."""
    return [texts[-1] for texts in (d.previous_texts, d.texts_after_request) if texts]


def clauses(text: str) -> list[tuple[str, str]]:
    """The statements of ``text``: its sentences split further at semicolons, each with the
    sentence before it (for a statement that leans on it, "It is not committed yet")."""
    found, before = [], ""
    for sentence in sentences(text):
        found += [(c.strip(), before) for c in sentence.split("; ") if len(c.strip()) > 3]
        before = sentence
    return found


def _with_context(clause: str, before: str) -> str:
    return f"{before} {clause}" if before and _PRONOUN.match(clause) else clause


def open_work(text: Said) -> list[str]:
    """The statements of ``text`` saying work is not done yet, each citing its entry."""
    if not _NOT_DONE.search(text):
        return []
    return [cited(_with_context(c, b), text.seq) for c, b in clauses(text) if _NOT_DONE.search(c)]


def stated_open(d: Digest) -> list[str]:
    """Statements of the last two exchanges saying work is not done yet."""
    return [item for text in recent_texts(d) for item in open_work(text)]


def stated_unverified(d: Digest) -> list[str]:
    """Successes of the last two exchanges stated only in prose ("stated, not verified: …",
    seed 000: verified kept apart): a test or build claim with no passing check in its
    exchange before it, a check the assistant says it ran ("I checked that `x` prints …") with
    no recorded run of that command."""
    starts = [r.position for r in d.requests]
    items = []
    for text in recent_texts(d):
        begun = max((p for p in starts if p < text.position), default=-1)
        ran = [c for c in d.commands if c.ok and begun < c.index < text.position]
        for clause, _ in clauses(text):
            if not _CLAIMED.search(clause) or _NOT_DONE.search(clause):
                continue
            checked = _CHECKED.search(clause)
            if (checked and any(c.text in clause for c in ran)) or (ran and not checked):
                continue
            items.append(cited(f"stated, not verified: {clause}", text.seq))
    return items


def summary_task_open(d: Digest, task: str) -> bool:
    """Whether a pending task of the compaction summary is still open: no closing signal names
    it since (a close command's output or an assistant line reporting it closed, done or
    complete, a todo item naming it marked completed); each signal closes it on its own."""
    if task_ids(task) & d.closed:
        return False
    named = _TASK_ID.match(task)
    if named is None:
        return True
    name = named.group(1)
    return not (
        any(closes(line, name) for line in d.closing_lines)
        or any(mentions(done, name) for done in d.done_tasks)
    )


def leftovers(d: Digest) -> list[str]:
    """Open todo items, open failures, open work stated in prose, else the summary's open
    tasks: what Pending lists while the session is not finished."""
    items = [
        f"{t.text} ({t.status})"
        for t in d.todos
        if t.status != "completed" and t.text not in d.done_tasks
    ]
    items += [cited(f"{_shown(c)} — its latest run failed", c.seq) for c in open_failures(d)]
    items += stated_open(d)
    if not d.todos:
        tasks = _BULLET.findall(summary_section(d.summary, "pending"))
        items += [t for t in tasks if summary_task_open(d, t)]
        items += inherited(d.predecessor.get("pending", []))
    return items


def pending_of(d: Digest, done: bool) -> list[str]:
    """What is left to do; empty when the session reports its work finished (seed 000: the
    brief says a finished session is finished; the leftovers go to uncertainties)."""
    return [] if done else unique(leftovers(d))


def next_steps_of(d: Digest, done: bool, pending: list[str]) -> list[str]:
    """The current state (the last assistant message, else the summary's current work) and
    what comes next (the task in progress, else the summary's next step)."""
    last = d.assistant_texts[-1] if d.assistant_texts else ""
    work = summary_section(d.summary, "current work")
    state = f"Current state (the last assistant message): “{clip(last, 240)}”" if last else ""
    if not last and work:
        state = f"Current state (the compaction summary): {clip(' '.join(sentences(work)[:2]))}"
    if done:
        said = (
            "The session reports its work finished"
            if d.texts_after_request
            else "The latest request's tool runs all succeeded and the log ends before the "
            "agent's answer: the work looks finished"
        )
        return unique([f"{said}; wait for the user's next request.", state])
    doing = [f"Continue: {t.text}" for t in d.todos if t.status == "in_progress"]
    step = summary_section(d.summary, "next step")
    if not doing and step and not d.assistant_texts:
        doing = [clip(" ".join(sentences(step)[:2]))]
    stated = [f"As the last assistant message says: {clip(t)}" for t in stated_next(last)]
    left = open_work(last) if isinstance(last, Said) else []
    stated += [f"Finish what the last assistant message leaves open: {item}" for item in left]
    steps = [*doing, *stated, state]
    if not doing and not stated:
        steps += [str(t) for t in d.predecessor.get("next_steps", [])[:1]]
    return unique(steps) or ["Continue from the goal and the artifacts."]


def stated_next(text: str) -> list[str]:
    """The sentences of ``text`` that say what comes next ("Next: …", "Next I will …",
    "Remaining: …")."""
    return [s for s in sentences(text) if _NEXT_SENTENCE.match(s)]


def uncertainties_of(d: Digest, count: int, done: bool) -> list[str]:
    """What the log cannot tell: successes stated but not verified, what a finished session
    left open; always ends with the note that no model wrote the brief."""
    items = []
    if d.summary:
        items.append("Work before the last compaction is known only from its summary.")
    if d.answer_missing:
        items.append("The log ends without the agent's answer to the latest request.")
    if d.failed_edits:
        items.append(f"{d.failed_edits} file edit(s) in the log failed and changed nothing.")
    if done:
        note = "left open in the log although the final message reports the work done: "
        items += [note + item for item in leftovers(d)]
    items += stated_unverified(d)
    last = d.assistant_texts[-1] if d.assistant_texts else ""
    items += [s for s in sentences(last) if s.endswith("?")]
    items = unique(items, MAX_ITEMS - 1)
    items.append(
        f"Written offline from the last {count} log entries without a model: details may be "
        "missing, check the artifacts."
    )
    return items


# How the offline agent acknowledges the brief a successor is seeded with (host.agent writes it;
# the handoff core cannot import the host). It is not the work's state: the brief skips it.
BRIEF_RECEIVED = "Offline agent: received the handoff brief."


def offline_brief(context: Sequence[Entry], *, cwd: str) -> dict[str, Any]:
    """Build a valid brief from the effective ``context`` (oldest first) without a model; its
    entries marked ``compacted`` (file edits before the last compaction) add to the
    artifacts only. The offline agent's acknowledgements of a brief are not read as its
    work (a second hop quotes the work, not "received the handoff brief")."""
    d = digest(context, cwd=cwd)
    d.assistant_texts = [t for t in d.assistant_texts if not t.startswith(BRIEF_RECEIVED)]
    done = finished(d)
    pending = pending_of(d, done)
    constraints = rules_of(d)
    brief = {
        "goal": goal_of(d),
        "decisions": without_rules(decisions_of(d), constraints),
        "constraints": constraints,
        "artifacts": artifacts_of(d, cwd),
        "verified": verified_of(d),
        "pending": pending,
        "next_steps": next_steps_of(d, done, pending),
        "uncertainties": uncertainties_of(d, sum(not e.get("compacted") for e in context), done),
    }
    return validate_brief(brief)
