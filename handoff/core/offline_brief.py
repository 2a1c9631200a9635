"""The offline summarizer: a brief built from the log's digest without a model (docs/spec.md,
Brief; docs/design.md, The brief tells done from open and cites its evidence).

Each field comes from the structure of the log (``handoff.digest.fold``), never from guesses,
and each verified item, decision and user rule names the log entry it comes from, "… (log #N)"
(items inherited from a predecessor's brief say "(earlier log #N)": that entry is in the
predecessor's log):

- goal: the predecessor's goal, else the compaction summary's primary request, else the first
  substantive request; plus the latest direction the user gave;
- decisions: the user's answers to the agent's questions ("question → answer"), stated
  decisions ("Decision:", "we'll use…", "instead of…") and the predecessor's; never an attempt
  that failed or an option rejected;
- constraints: user sentences and answers that state rules ("only", "never", "must", "don't",
  "max 7", "twice") and the predecessor's;
- artifacts: the workspace, then the files as they stand at the end (moved, staged, committed;
  deleted ones left out), last touched first, with what was done, then the files the
  compaction summary names but those it marks unchanged or read only;
- verified: checks, commits and pushes whose latest run the log shows passed (not flagged by
  the runtime, no findings; a piped check by its printed text); a command with no log entry to
  cite is not verified;
- pending: open items of the latest todo list, failures no later run of the same intent closed
  (``digest.covers``), work the assistant states is not done yet in the last two exchanges,
  else the summary's pending tasks nothing closed since (``summary_task_open``), each saying
  why; empty for a finished session, whose leftovers go to uncertainties; the follow-ups filed
  at the end in any case;
- next_steps: the current state (the last assistant message) and what comes next; a finished
  session says first that it is finished and that the successor waits for the next request;
- uncertainties: what the log cannot tell: successes stated only in prose ("stated, not
  verified: …"), behaviour of an option nothing ran or tested ("claimed, not shown in the log:
  …"), checks whose outcome is not shown, the summary's failed attempts ("tried, did
  not work: …"), leftovers of a finished session, and that no model wrote the brief
  (docs/design.md, "Verified means it passed").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from handoff.core.brief import validate_brief
from handoff.core.said import (
    BULLET,
    ITEM_CHARS,
    MAX_ITEMS,
    RULE_WORDS,
    TASK_ID,
    cite_or_summary,
    cited,
    clip,
    decisions_in,
    may_hold,
    sentences,
    states_rule,
    substantive,
    tried_and_failed,
    uncited,
    unique,
)
from handoff.digest.fold import (
    NOT_SHOWN,
    OPTION,
    Command,
    Digest,
    Ends,
    Entry,
    Said,
    absolute,
    covers,
    digest,
    intents,
    is_generated_path,
    mentions,
    only_stages,
    task_ids,
)
from handoff.digest.fold import section as summary_section

MAX_ARTIFACTS = 40
# Files named in a Verified item as changed after its check ran (``changed_after``).
MAX_CHANGED = 2
MAX_NAME = 60
# The compaction summary's sections that tell how problems were solved (decisions) and what
# was tried and failed (uncertainties).
SOLVED_SECTIONS = ("problem solving", "errors and fixes")

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
# A statement of what something does ("--json prints the days", "it returns 2").
_BEHAVES = re.compile(
    r"\b(?:prints|outputs|returns|writes|emits|shows|accepts|rejects|exits with)\b", re.I
)
UNSHOWN = "claimed, not shown in the log"
# A claim of a check the assistant ran itself: backed only by a command it names.
_CHECKED = re.compile(r"\b(?:checked|confirmed|made sure) that\b", re.IGNORECASE)
# A statement that leans on the sentence before it ("It is not committed yet").
_PRONOUN = re.compile(r"^(?:it|this|that|they|these|those)\b", re.IGNORECASE)
_CITED = re.compile(r"\((earlier |older )?log #(\d+)\)")
# How an answer to the agent's question reads (``digest``: "question → answer").
ANSWERED = " → "
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
# What a compaction summary says of a file it lists that the work did not change.
_UNCHANGED = re.compile(
    r"\b(?:unchanged|read[ -]only|only read|not (?:changed|modified|edited))\b", re.IGNORECASE
)
# A file a task names ("Update CHANGELOG.md", "src/ledger/cli.py").
_TASK_FILE = re.compile(r"(?<![\w/.-])([\w./-]*\w\.[A-Za-z]\w{0,7})\b")
# Why a pending item is open.
NOT_DONE_SINCE = "pending in the compaction summary; nothing later in the log did it"
FILED_FOR_LATER = "a follow-up filed at the end, not done in this log"
# A request the log ends with, or that only the offline agent acknowledged.
UNANSWERED = "requested, not answered yet"
NOT_COMMITTED = "not committed (no `git add` staged the deletion before the later commit)"
_QUOTED = re.compile(r"[\"“]([^\"”]{3,300})[\"”]")


def inherited(items: Iterable[object]) -> list[str]:
    """A predecessor's items, their "(log #N)" marked as "(earlier log #N)": the entry is in
    the predecessor's log, not in this one; one already "earlier" becomes "(older log #N)"
    (further back than the predecessor's source, so no page links it)."""
    return [_CITED.sub(_further_back, str(item)) for item in items]


def _further_back(cited: re.Match[str]) -> str:
    return f"({'older' if cited[1] else 'earlier'} log #{cited[2]})"


def first_request(d: Digest) -> str:
    """The goal's start: the predecessor's goal, the summary's request, or the first request."""
    if d.predecessor.get("goal"):
        return str(d.predecessor["goal"]).split(" — latest direction: ")[0]
    primary = summary_section(d.summary, "primary request", "request")
    if primary:
        return clip(sentences(primary)[0])
    return d.first_substantive or (d.requests[0] if d.requests else "")


def latest_direction(d: Digest, first: str) -> str:
    """The latest substantive request of the log (or quoted in the summary), if not ``first``."""
    said = _QUOTED.findall(summary_section(d.summary, "user messages"))
    latest = d.last_substantive or _last(said, substantive)
    return "" if not latest or clip(latest) in clip(first) else latest


def goal_of(d: Digest) -> str:
    """First substantive request plus the latest direction (docs/spec.md, Brief: the user's
    current objective)."""
    first = first_request(d)
    latest = latest_direction(d, first)
    if first and latest:
        return clip(f"{clip(first, 200)} — latest direction: {latest}", 600)
    return clip(first or latest or "Continue the work of the previous session.", 600)


def rules_of(d: Digest) -> list[str]:
    """User sentences and answers that state rules, each citing its entry, the predecessor's
    constraints first (the earliest ``MAX_ITEMS``: the digest keeps those of the log). Rules of
    the compaction summary's primary request and of the user messages it quotes cite the
    summary: after a compaction the request that set them is only there."""
    quoted = _QUOTED.findall(summary_section(d.summary, "user messages"))
    primary = summary_section(d.summary, "primary request")
    # The summary's request and messages came first.
    summarized = (
        cite_or_summary(s, 0)
        for text in [primary, *quoted]
        if text and may_hold(RULE_WORDS, text)
        for s in sentences(text)
        if states_rule(s)
    )
    answered = (cited(a, a.seq) for a in d.rule_answers)
    constraints = inherited(d.predecessor.get("constraints", []))
    return unique(itertools.chain(constraints, answered, summarized, d.request_rules), claims=True)


def without_rules(decisions: list[str], constraints: list[str]) -> list[str]:
    """Return ``decisions`` without the rules ``constraints`` already lists (the same text,
    whatever entry each cites): a rule is listed once, as a constraint. The user's answer to
    the agent's question ("question → answer") stays in both: the option chosen is a decision,
    the rule it states a constraint (docs/spec.md, Brief)."""
    rules = {uncited(rule) for rule in constraints}
    return [item for item in decisions if ANSWERED in item or uncited(item) not in rules]


def failed_attempts(d: Digest) -> list[str]:
    """The attempts the compaction summary reports failed or rejected: "tried, did not work:
    …" (an uncertainty, never a decision)."""
    return [
        f"tried, did not work: {clip(attempt, 240)} (compaction summary)"
        for name in SOLVED_SECTIONS
        for attempt in tried_and_failed(summary_section(d.summary, name))[1]
    ]


def decisions_of(d: Digest) -> list[str]:
    """The user's answers to the agent's questions, the user's later directions that state a
    rule or choice (accepted corrections: "leave plot.py for now", "retry twice"), and stated
    decisions of the user and the assistant, each citing its entry, the predecessor's first,
    latest kept (the digest keeps the ends of each source, ``Ends``)."""
    solved = Ends()
    for name in SOLVED_SECTIONS:
        text, _ = tried_and_failed(summary_section(d.summary, name))
        solved.add([cite_or_summary(s, 0) for s in decisions_in(text, False)])
    earlier = d.predecessor.get("decisions", [])
    answers = (cited(a, a.seq) for a in d.answers)
    room = MAX_ITEMS - len(earlier) - d.answer_count
    # After a compaction or a handoff the first request in the log is a later one too.
    first = d.first_decisions[0 if d.summary or d.predecessor else 1]
    sources = [solved, first, d.request_decisions, d.plan_decisions, d.text_decisions]
    chosen: list[str]
    if room > 0:
        chosen = [item for source in sources for item in source.tail][-room:]
    else:
        # A list of MAX_ITEMS or more may still repeat itself (``unique`` drops the repeats):
        # the log's decisions then fill the room from the first one, past the surplus (exact
        # while the surplus is at most MAX_ITEMS: the digest keeps the first 2 × MAX_ITEMS).
        chosen = []
        for source in sources:
            chosen += source.head
            if source.more:
                break
        chosen = chosen[-room:]
    return unique(itertools.chain(inherited(earlier), answers, chosen))


def _last(items: Sequence[str], keep: Callable[[str], bool]) -> str:
    """The last of ``items`` that ``keep`` accepts, or "" (read from the end)."""
    return next((item for item in reversed(items) if keep(item)), "")


def _actions(actions: dict[str, int]) -> str:
    return ", ".join(f"{a} ×{n}" if n > 1 else a for a, n in actions.items())


def artifacts_of(d: Digest, cwd: str) -> list[str]:
    """The workspace, the files as they stand at the end (last touched first, with what was
    done: moved, staged, committed; deleted files left out), the summary's files but those it
    marks unchanged or only read (docs/design.md, "Verified means it passed")."""
    items = [f"workspace: {cwd}"] if cwd else []
    items += [f"{t.path} — {_actions(t.actions)}" for t in d.ranked_files()]
    listed = set(d.files)
    for path, what in _SUMMARY_FILE.findall(summary_section(d.summary, "files")):
        full = absolute(path, cwd)
        if _UNCHANGED.search(what):
            continue
        if full not in listed and not is_generated_path(full) and "://" not in full:
            said = f"{clip(what, 160)} " if what.strip() else ""
            items.append(f"{full} — {said}(before the last compaction)")
            listed.add(full)
    for path, seq in uncommitted_deletions(d):
        items.append(f"{path} — deleted (log #{seq}), {NOT_COMMITTED}")
        listed.add(path)
    for item in inherited(d.predecessor.get("artifacts", [])):
        path = str(item).split(" — ")[0]
        if path not in listed and not str(item).startswith("workspace: "):
            items.append(str(item))
            listed.add(path)
    if not listed:
        items += [f"{path} — mentioned by the assistant" for path in d.mentioned]
    return unique(items, MAX_ARTIFACTS)


def uncommitted_deletions(d: Digest) -> list[tuple[str, int]]:
    """The files removed (``rm``, each with its log entry) whose deletion a later commit did
    not take (no ``git add`` staged it before): uncommitted work the log shows, so the session
    is not finished (docs/design.md, "Verified means it passed")."""
    return [(path, seq) for path, (seq, _) in d.deleted.items() if seq < d.last_commit]


def _shown(command: Command) -> str:
    line = command.text.splitlines()[0] if command.text else ""
    return f"`{clip(line, 120)}` → {command.outcome}"


def _latest_runs(d: Digest) -> list[Command]:
    """Each command's latest run, in the order of those runs."""
    return sorted(d.latest_runs.values(), key=lambda c: c.index)


def verified_of(d: Digest) -> list[str]:
    """Commands whose latest run passed, each citing the entry with its outcome, oldest first,
    the latest ``MAX_ITEMS``; a run with no entry to cite, or one that only stages files
    (``git add``), is not verified. A check followed by changes to files it covers says so
    (``changed_after``): it vouches for the files as they were when it ran."""
    own = [
        _verified_item(c, changed_after(d, c))
        for c in _latest_runs(d)
        if c.ok and c.seq and not only_stages(c.text)
    ]
    return unique([*inherited(d.predecessor.get("verified", [])), *own][-MAX_ITEMS:])


def _verified_item(run: Command, note: str) -> str:
    """ "`command` → outcome (log #N)" and ``note``, the command and outcome clipped so the
    note and the pointer are never cut."""
    suffix = f" (log #{run.seq})"
    return clip(_shown(run), ITEM_CHARS - len(suffix) - len(note)) + suffix + note


def changed_after(d: Digest, check: Command) -> str:
    """ ", before later edits to X (log #N) and Y (log #M)": the files ``check`` covers that
    the log wrote, edited or moved after it ran and no later passing run of the same intent
    (``covers``) checked again (the first ``MAX_CHANGED``, each citing the result of its last
    change; more are counted), or "" when none or ``check`` only records the work (``git
    commit`` / ``git push``). A check that names no path covers every file;
    one that names paths, the files at or under them (docs/design.md, "Verified means it
    passed")."""
    scopes = [scope for head, scope in intents(check.text).items() if not head.startswith("git")]
    if not scopes:
        return ""
    roots = [absolute(path, d.cwd) for scope in scopes for path in scope]
    whole = any(not scope for scope in scopes)
    reruns = [r.index for r in d.latest_runs.values() if r.ok and covers(r, check)]
    changed = sorted(
        (
            t
            for t in d.files.values()
            if t.changed > check.index
            and not any(index > t.changed for index in reruns)
            and (whole or any(t.path == r or t.path.startswith(f"{r}/") for r in roots))
        ),
        key=lambda t: t.changed,
    )
    if not changed:
        return ""
    named = [
        clip(_relative(t.path, d.cwd), MAX_NAME)
        + (f" (log #{t.changed_seq})" if t.changed_seq else "")
        for t in changed[:MAX_CHANGED]
    ]
    more = len(changed) - len(named)
    listed = ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1]
    files = f" and {more} more file{'s' if more > 1 else ''}" if more else ""
    return f", before later edits to {listed}{files}"


def _relative(path: str, cwd: str) -> str:
    root = cwd.rstrip("/") + "/"
    return path[len(root) :] if cwd and path.startswith(root) else path


def not_shown(d: Digest) -> list[str]:
    """Checks whose latest run's outcome the log does not show (a pipe hid the status and the
    printed text does not tell): never verified, said to be unknown (docs/design.md, "Verified
    means it passed")."""
    return [
        cited(f"{NOT_SHOWN}: `{clip(c.text.splitlines()[0], 120)}`", c.seq)
        for c in _latest_runs(d)
        if c.ok is None
    ]


def finished(d: Digest) -> bool:
    """The assistant reports the work finished since the latest request and goes on no further
    (any sentence that says so, not one phrasing; "not done", "once done" do not count); or,
    its answer missing (``Digest.answer_missing``), every tool run of the latest request
    succeeded and nothing is left open."""
    if d.last_after is None:
        return d.answer_missing and not leftovers(d)
    said = d.finished_said and not _GOING_ON.search(d.last_after)
    return said and not uncommitted_deletions(d)


def recent_texts(d: Digest) -> list[Said]:
    """The assistant's last text of each of the last two exchanges (the latest request's and
    the one before): what each exchange concluded, not superseded yet by a later one (an
    earlier text of an exchange is superseded by its last)."""
    return [text for text in (d.previous_last, d.last_after) if text is not None]


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
    """Successes of the last two exchanges stated only in prose ("stated, not verified: …":
    verified is kept apart, docs/design.md, Verified means it passed: a brief that states nothing
    false): a test or build claim with no passing check in its
    exchange before it, a check the assistant says it ran ("I checked that `x` prints …") with
    no recorded run of that command; and what an option does, stated with nothing in the log
    running or testing the option ("claimed, not shown in the log: …", ``unshown``)."""
    starts = [r.position for r in d.requests]
    items = []
    for text in recent_texts(d):
        begun = max((p for p in starts if p < text.position), default=-1)
        ran = [c for c in d.runs if c.ok and begun < c.index < text.position]
        for clause, _ in clauses(text):
            if _NOT_DONE.search(clause):
                continue
            if not _CLAIMED.search(clause):
                items += [cited(f"{UNSHOWN}: {clause}", text.seq)] if unshown(d, clause) else []
                continue
            checked = _CHECKED.search(clause)
            if (checked and any(c.text in clause for c in ran)) or (ran and not checked):
                continue
            items.append(cited(f"stated, not verified: {clause}", text.seq))
    return items


def unshown(d: Digest, clause: str) -> bool:
    """Whether ``clause`` states what an option does ("--json prints the days as a list") and
    names an option no successful command ran and no test file written or edited names
    (``Digest.exercised``): a behaviour claimed, not shown in the log."""
    options = OPTION.findall(clause) if _BEHAVES.search(clause) else []
    return any(option not in d.exercised for option in options)


def summary_task_open(d: Digest, task: str) -> bool:
    """Whether a pending task of the compaction summary is still open: no closing signal names
    it since (a close command's output or an assistant line reporting it closed, done or
    complete, a todo item naming it marked completed) and nothing the log did after the
    summary does it (``done_since``); each signal closes it on its own."""
    if task_ids(task) & d.closed or done_since(d, task):
        return False
    named = TASK_ID.match(task)
    if named is None:
        return True
    name = named.group(1)
    return not (name in d.closed_tasks or any(mentions(done, name) for done in d.done_tasks))


def done_since(d: Digest, task: str) -> bool:
    """Whether the log did ``task`` (a pending task of the compaction summary) after the
    summary: a file it names was written or edited since, a command it names ran green since
    (its program: "Run the suite (pytest -q)"), or a commit or push it asks for was made."""
    files = [t.path for t in d.files.values() if t.last > d.summary_at]
    named = _TASK_FILE.findall(task)
    if any(path.endswith(f"/{name.lstrip('./')}") for name in named for path in files):
        return True
    green = [c for c in d.latest_runs.values() if c.ok and c.index > d.summary_at]
    words = {w.lower() for w in re.findall(r"[\w.-]+", task)}
    for run in green:
        heads = intents(run.text)
        if any(head.split()[0] in words and head.split()[0] != "git" for head in heads):
            return True
        if any(head in ("git commit", "git push") and head.split()[1] in words for head in heads):
            return True
    return False


def leftovers(d: Digest) -> list[str]:
    """Open todo items, open failures, open work stated in prose, else the summary's open
    tasks: what Pending lists while the session is not finished."""
    items = [
        f"{t.text} ({t.status})"
        for t in d.todos
        if t.status != "completed" and t.text not in d.done_tasks
    ]
    items += [cited(f"{_shown(c)} — its latest run failed", c.seq) for c in d.failures]
    items += deletions_to_commit(d)
    items += stated_open(d)
    items += [cited(f"{UNANSWERED}: {clip(r, 240)}", r.seq) for r in d.unanswered]
    if not d.todos:
        tasks = BULLET.findall(summary_section(d.summary, "pending"))
        items += [f"{t} — {NOT_DONE_SINCE}" for t in tasks if summary_task_open(d, t)]
        items += inherited(d.predecessor.get("pending", []))
    return items


def deletions_to_commit(d: Digest) -> list[str]:
    """The deletions the commit after them did not take, each saying why it is open."""
    return [
        f"Commit the deletion of {path} (log #{seq}), {NOT_COMMITTED}"
        for path, seq in uncommitted_deletions(d)
    ]


def followups(d: Digest) -> list[str]:
    """The follow-ups filed since the latest request ("Discovered & filed: X-5 …"), each with
    its id and why it is open: work for later, whether or not the session is finished."""
    return [cited(f"{clip(f, 200)} — {FILED_FOR_LATER}", f.seq) for f in d.followups]


def pending_of(d: Digest, done: bool) -> list[str]:
    """What is left to do: the follow-ups filed at the end, and, unless the session reports
    its work finished, its leftovers (the brief says a finished session is finished; its
    leftovers go to uncertainties)."""
    return unique([*([] if done else leftovers(d)), *followups(d)])


def next_steps_of(d: Digest, done: bool, pending: list[str]) -> list[str]:
    """The current state (the last assistant message, else the summary's current work) and
    what comes next (the task in progress, else the summary's next step)."""
    last = d.last_text or ""
    work = summary_section(d.summary, "current work")
    state = f"Current state (the last assistant message): “{clip(last, 240)}”" if last else ""
    if not last and work:
        state = f"Current state (the compaction summary): {clip(' '.join(sentences(work)[:2]))}"
    if done:
        said = (
            "The session reports its work finished"
            if d.last_after is not None
            else "The latest request's tool runs all succeeded and the log ends before the "
            "agent's answer: the work looks finished"
        )
        return unique([f"{said}; wait for the user's next request.", state])
    doing = [f"Continue: {t.text}" for t in d.todos if t.status == "in_progress"]
    step = summary_section(d.summary, "next step")
    if not doing and step and d.last_text is None:
        doing = [clip(" ".join(sentences(step)[:2]))]
    stated = [f"As the last assistant message says: {clip(t)}" for t in stated_next(last)]
    left = open_work(last) if isinstance(last, Said) else []
    stated += [f"Finish what the last assistant message leaves open: {item}" for item in left]
    latest = d.unanswered[-1:]
    asked = [cited(f"Answer the latest request first: {clip(r, 240)}", r.seq) for r in latest]
    steps = [*asked, *deletions_to_commit(d), *doing, *stated, state]
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
    items += not_shown(d)
    items += failed_attempts(d)
    last = d.last_text or ""
    items += [s for s in sentences(last) if s.endswith("?")]
    items = unique(items, MAX_ITEMS - 1)
    items.append(
        f"Written offline from the last {count} log entries without a model: details may be "
        "missing, check the artifacts."
    )
    return items


def offline_brief(context: Sequence[Entry], *, cwd: str) -> dict[str, Any]:
    """Build a valid brief from the effective ``context`` (oldest first) without a model; its
    entries marked ``compacted`` (file edits before the last compaction) add to the
    artifacts only."""
    return brief_of(digest(context, cwd=cwd))


def brief_of(d: Digest) -> dict[str, Any]:
    """Build a valid brief from a digest read to its end (``Digest.result``); each field reads
    the digest's bounded parts, so the time does not grow with the log."""
    done = finished(d)
    pending = pending_of(d, done)
    constraints = rules_of(d)
    brief = {
        "goal": goal_of(d),
        "decisions": without_rules(decisions_of(d), constraints),
        "constraints": constraints,
        "artifacts": artifacts_of(d, d.cwd),
        "verified": verified_of(d),
        "pending": pending,
        "next_steps": next_steps_of(d, done, pending),
        "uncertainties": uncertainties_of(d, d.own, done),
    }
    return validate_brief(brief)
