"""The brief evaluation: each log's brief scored against hand-written probes, for recall and
for precision.

``samples/probes/<log>.json`` holds, for one log (a sample of ours, ``samples/…``, or a shared
transcript, ``shared:transcripts/…``), what a successor needs, written by hand from reading the
log (samples/README.md):

- ``finished``: whether the log ends with the work done;
- ``probes``: per brief field (docs/spec.md, Brief), the facts the field must hold, each as
  ``{"fact", "terms"}``: a brief item holds the fact when it contains every term (a term is a
  string, or a list of alternatives), matched without regard to case or wording around it;
- ``must_not``: per brief field, what the field must not say (a failed run, a file moved,
  deleted or only read, a rejected option, a finished item): an item of that field holding
  one of these is a *false item*;
- ``closed``: what the log started and then finished (a failure a later run fixed, a task it
  closed): a Pending item that holds one of these is a false item too;
- ``verified_by``: the command runs whose output in the log verified something: a Verified
  item that holds none of these is a false item.

Every "(log #N)" an item cites must name an entry of the log, and a Verified item's entry must
be a tool result whose runtime did not report failure and that shows the outcome the item
quotes (its later pointers, to the edits made after the check, results not flagged as failed);
a pointer that does not is a *bad pointer*.

The brief is the one ``handoff now`` would seed: the log imported, the embedded summarizer run
on the session's effective context (all inside a rolled-back transaction). The targets are
100 % recall on every field, no false item in any field, every pointer backing its claim, and
the finished state right (the first next step says finished exactly when the log ends so).
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from handoff import summarizer
from handoff.core.brief import BRIEF_FIELDS, render_brief
from host.importers import import_transcript
from host.models import Message
from host.services import SessionController

ROOT = Path(__file__).resolve().parents[1]
PROBES = ROOT / "samples" / "probes"
SHARED = ROOT.parent / "shared"
SHARED_PREFIX = "shared:"
DOC = ROOT / "docs" / "briefs.md"
# The line of ``docs/briefs.md`` below which ``write_markdown`` writes.
GENERATED = "<!-- Below: written by `python -m bench briefs --markdown`; do not edit by hand. -->"
# A first next step that says the session's work is finished.
FINISHED = re.compile(r"\b(?:finished|complete|completed|done)\b", re.IGNORECASE)
# A pointer to a log entry, and the outcome a Verified item quotes ("`cmd` → outcome (log #N)").
_POINTER = re.compile(r"\(log #(\d+)\)")
_OUTCOME = re.compile(r" → (.+?) \(log #\d+\)")
_NONZERO_EXIT = re.compile(r"^Exit code [1-9]\d*", re.MULTILINE)
# The fields whose items are checked for false items whatever the probes say.
_CHECKED = ("pending", "verified")

Term = str | tuple[str, ...]


def _pattern(term: str) -> re.Pattern[str]:
    """Match ``term`` at the start of a word; a term ending in a digit only as a whole number,
    id or version (``E-1`` ≠ ``E-12``, ``E-1.2``), a word also with an ending (``example`` →
    ``examples``, ``commit`` → ``committed``)."""
    end = r"(?!\d|\.\d)" if term[-1:].isdigit() else ""
    return re.compile(rf"(?<!\w){re.escape(term)}{end}", re.IGNORECASE)


@dataclass(frozen=True)
class Probe:
    """One fact, held by a brief item that contains all its terms (each term or an alternative)."""

    fact: str
    terms: tuple[Term, ...]

    def held_by(self, item: str) -> bool:
        """Return whether ``item`` contains every term (one of its alternatives, for a tuple)."""
        return all(
            any(
                _pattern(word).search(item)
                for word in (term if isinstance(term, tuple) else (term,))
            )
            for term in self.terms
        )

    def held_in(self, items: Sequence[str]) -> bool:
        return any(self.held_by(item) for item in items)


@dataclass(frozen=True)
class LogProbes:
    """The probes of one log (see the module docstring)."""

    name: str
    log: str
    finished: bool
    probes: Mapping[str, tuple[Probe, ...]]
    closed: tuple[Probe, ...]
    verified_by: tuple[Probe, ...]
    must_not: Mapping[str, tuple[Probe, ...]] = field(default_factory=dict)

    def path(self) -> Path:
        """The log's file: ``samples/…`` under the checkout, ``shared:…`` under ``../shared``."""
        if self.log.startswith(SHARED_PREFIX):
            return SHARED / self.log.removeprefix(SHARED_PREFIX)
        return ROOT / self.log


@dataclass(frozen=True)
class Entry:
    """One log entry a brief may cite: its role, its text and, for a tool result, whether its
    runtime reported failure (``tool_error``: True failed, False succeeded, None not said)."""

    role: str
    content: str
    tool_error: bool | None = None


@dataclass
class Score:
    """How one brief fares against its log's probes."""

    name: str
    recall: dict[str, tuple[int, int]] = field(default_factory=dict)  # field → (held, probes)
    missed: list[str] = field(default_factory=list)
    false: dict[str, list[str]] = field(default_factory=dict)  # field → its false items
    listed: int = 0  # items in the fields that have false-item checks
    bad_pointers: list[str] = field(default_factory=list)
    pointers: int = 0
    finished_right: bool = True

    @property
    def false_items(self) -> list[str]:
        """Every false item, as "field: item"."""
        return [f"{name}: {item}" for name, items in self.false.items() for item in items]

    @property
    def perfect(self) -> bool:
        """Every probe held, no false item, every pointer backing its claim, the finished state
        right."""
        full = all(held == total for held, total in self.recall.values())
        return full and not self.false_items and not self.bad_pointers and self.finished_right


def _probe(raw: Any, where: str) -> Probe:
    if not isinstance(raw, dict) or not isinstance(raw.get("fact"), str):
        raise ValueError(f"{where}: a probe is an object with a string 'fact'")
    terms = raw.get("terms")
    if not isinstance(terms, list) or not terms:
        raise ValueError(f"{where}: {raw['fact']!r} needs a non-empty list of 'terms'")
    parsed: list[Term] = []
    for term in terms:
        if isinstance(term, str) and term:
            parsed.append(term)
        elif isinstance(term, list) and term and all(isinstance(t, str) and t for t in term):
            parsed.append(tuple(term))
        else:
            raise ValueError(f"{where}: {raw['fact']!r}: a term is a string or a list of strings")
    return Probe(raw["fact"], tuple(parsed))


def _probes(raw: Any, where: str) -> tuple[Probe, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"{where}: must be a list of probes")
    return tuple(_probe(item, where) for item in raw)


def load(path: Path) -> LogProbes:
    """Read one probe file; raise ``ValueError`` naming the file and what is wrong with it."""
    where = path.name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a probe file holds one JSON object")
    if not isinstance(data.get("log"), str) or not isinstance(data.get("finished"), bool):
        raise ValueError(f"{where}: needs 'log' (a path) and 'finished' (true or false)")
    fields = data.get("probes", {})
    if not isinstance(fields, dict):
        raise ValueError(f"{where}: 'probes' maps brief fields to lists of probes")
    must_not = data.get("must_not", {})
    if not isinstance(must_not, dict):
        raise ValueError(f"{where}: 'must_not' maps brief fields to lists of probes")
    unknown = sorted((set(fields) | set(must_not)) - set(BRIEF_FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown brief field(s): {', '.join(unknown)}")
    return LogProbes(
        name=path.stem,
        log=data["log"],
        finished=data["finished"],
        probes={name: _probes(raw, f"{where}: {name}") for name, raw in fields.items()},
        closed=_probes(data.get("closed", []), f"{where}: closed"),
        verified_by=_probes(data.get("verified_by", []), f"{where}: verified_by"),
        must_not={k: _probes(raw, f"{where}: must_not: {k}") for k, raw in must_not.items()},
    )


def load_all(folder: Path = PROBES) -> list[LogProbes]:
    """Every probe file of ``folder``, by name."""
    return [load(path) for path in sorted(folder.glob("*.json"))]


def _items(brief: Mapping[str, Any], name: str) -> list[str]:
    value = brief.get(name, [])
    return [value] if isinstance(value, str) else list(value)


def false_items(brief: Mapping[str, Any], probes: LogProbes) -> dict[str, list[str]]:
    """Per field with a check, the items it must not hold: those holding a ``must_not`` probe
    of the field, Pending items the log ``closed``, Verified items no ``verified_by`` run backs."""
    checks: dict[str, Callable[[str], bool]] = {
        name: functools.partial(_holds_any, facts) for name, facts in probes.must_not.items()
    }
    checks["pending"] = _either(checks.get("pending"), functools.partial(_holds_any, probes.closed))
    backed = functools.partial(_holds_any, probes.verified_by)
    checks["verified"] = _either(checks.get("verified"), lambda item: not backed(item))
    return {name: [i for i in _items(brief, name) if false(i)] for name, false in checks.items()}


def _holds_any(facts: Sequence[Probe], item: str) -> bool:
    return any(fact.held_by(item) for fact in facts)


def _either(
    first: Callable[[str], bool] | None, second: Callable[[str], bool]
) -> Callable[[str], bool]:
    return second if first is None else lambda item: first(item) or second(item)


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def backs(item: str, entry: Entry | None, name: str) -> bool:
    """Whether ``entry`` (None: no such entry in the log) backs ``item`` of field ``name``: it
    exists; for Verified, it is a tool result whose runtime did not report failure and that
    shows the outcome the item quotes after "→" (an "exit code 0" the runtime's success
    flag or the text's absence of an exit code shows)."""
    if entry is None:
        return False
    if name != "verified":
        return True
    if not _shows_success(entry):
        return False
    outcome = _OUTCOME.search(item)
    said = outcome.group(1) if outcome else ""
    if said.startswith("exit code 0"):
        return _NONZERO_EXIT.search(entry.content) is None
    return bool(said) and _normal(said) in _normal(entry.content)


def bad_pointers(brief: Mapping[str, Any], entries: Mapping[int, Entry]) -> tuple[int, list[str]]:
    """How many "(log #N)" pointers the brief holds, and the items whose pointer does not back
    them (``backs``), as "field: item". A Verified item's later pointers ("…, before later
    edits to X (log #N)") name the result of each edit: a tool result not flagged as failed."""
    count, bad = 0, []
    for name in BRIEF_FIELDS:
        for item in _items(brief, name):
            for place, seq in enumerate(_POINTER.findall(item)):
                count += 1
                entry = entries.get(int(seq))
                edit = name == "verified" and place > 0
                if not (_shows_success(entry) if edit else backs(item, entry, name)):
                    bad.append(f"{name}: {item}")
    return count, bad


def _shows_success(entry: Entry | None) -> bool:
    return entry is not None and entry.role == "tool" and not entry.tool_error


def score(
    brief: Mapping[str, Any], probes: LogProbes, entries: Mapping[int, Entry] | None = None
) -> Score:
    """Score ``brief`` (a validated brief) against ``probes``: recall per field, false items
    per field (``false_items``), the pointers to ``entries`` (the log's entries by ``seq``;
    not checked when None) and the finished state (a first next step saying so)."""
    result = Score(probes.name)
    for name, facts in probes.probes.items():
        items = _items(brief, name)
        held = [fact for fact in facts if fact.held_in(items)]
        result.recall[name] = (len(held), len(facts))
        result.missed += [f"{name}: {fact.fact}" for fact in facts if fact not in held]
    result.false = {name: items for name, items in false_items(brief, probes).items() if items}
    result.listed = sum(len(_items(brief, name)) for name in {*probes.must_not, *_CHECKED})
    if entries is not None:
        result.pointers, result.bad_pointers = bad_pointers(brief, entries)
    steps = _items(brief, "next_steps")
    said_finished = bool(steps) and FINISHED.search(steps[0]) is not None
    result.finished_right = said_finished == probes.finished
    return result


def brief_of(path: Path) -> tuple[dict[str, Any], dict[int, Entry]]:
    """Import ``path`` for a new user and return the embedded summarizer's brief of its main
    and the main's log entries by ``seq`` (what the brief's pointers name); nothing stays in
    the database (a rolled-back transaction), whoever imported it before."""
    with transaction.atomic():
        owner = User.objects.create(username=f"brief-probes-{uuid.uuid4().hex}")
        main = import_transcript(path, owner)[0]
        brief = summarizer.summarize(main, SessionController().effective_context(main))
        rows = Message.objects.filter(session=main).values_list(
            "seq", "role", "content", "tool_error"
        )
        entries = {seq: Entry(role, content, error) for seq, role, content, error in rows}
        transaction.set_rollback(True)
    return brief, entries


COLUMNS = ("goal", "decisions", "constraints", "artifacts", "verified", "pending", "next_steps")


def _cell(recall: Mapping[str, tuple[int, int]], name: str) -> str:
    held, total = recall.get(name, (0, 0))
    return f"{held}/{total}" if total else "—"


def _total(scores: Sequence[Score]) -> Score:
    """One row summing every log's held/probes per field, false items and pointers."""
    total = Score("all logs")
    for s in scores:
        for name, (held, probes) in s.recall.items():
            before = total.recall.get(name, (0, 0))
            total.recall[name] = (before[0] + held, before[1] + probes)
        for name, items in s.false.items():
            total.false[name] = [*total.false.get(name, []), *items]
        total.listed += s.listed
        total.bad_pointers += s.bad_pointers
        total.pointers += s.pointers
    return total


def _row(s: Score, finished: str) -> str:
    cells = [_cell(s.recall, name) for name in (*COLUMNS, "uncertainties")]
    backed = s.pointers - len(s.bad_pointers)
    cells += [f"{len(s.false_items)}/{s.listed}", f"{backed}/{s.pointers}"]
    return f"| {s.name} | " + " | ".join([*cells, finished]) + " |"


def table(scores: Sequence[Score]) -> list[str]:
    """The Markdown table: recall per field (held/probes), uncertainties, false items (of the
    items listed in the fields checked), pointers backing their claim (of all pointers),
    finished right; a last row over all logs when there are several; then every miss, false
    item and bad pointer, log by log."""
    heads = [*COLUMNS, "uncertainties", "false items", "pointers backed", "finished"]
    lines = ["| log | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    lines += [row(s) for s in scores]
    if len(scores) > 1:
        right = sum(s.finished_right for s in scores)
        lines.append(_row(_total(scores), f"{right}/{len(scores)} right"))
    for s in scores:
        lines += [f"- {s.name}: missed {miss}" for miss in s.missed]
        lines += [f"- {s.name}: false {item}" for item in s.false_items]
        lines += [f"- {s.name}: bad pointer in {item}" for item in s.bad_pointers]
        if not s.finished_right:
            lines.append(f"- {s.name}: the finished state is wrong")
    return lines


def row(s: Score) -> str:
    """The table row of one log's score."""
    return _row(s, "right" if s.finished_right else "WRONG")


def section(name: str, brief: Mapping[str, Any]) -> list[str]:
    """The lines of ``docs/briefs.md`` that show the brief of the log ``name``: a heading, then
    the brief as the successor is seeded with it (``render_brief``), its headings two levels
    down."""
    shown = render_brief(dict(brief)).replace("\n## ", "\n##### ")
    return [f"### `{name}`", "", *f"###{shown}".splitlines()]


@dataclass(frozen=True)
class Evaluated:
    """One probed log's brief and its score."""

    probes: LogProbes
    brief: dict[str, Any]
    score: Score


def evaluate() -> tuple[list[Evaluated], list[LogProbes]]:
    """Score every probed log whose file is here; return them and the logs skipped (absent)."""
    done, skipped = [], []
    for probes in load_all():
        if not probes.path().is_file():
            skipped.append(probes)
            continue
        brief, entries = brief_of(probes.path())
        done.append(Evaluated(probes, brief, score(brief, probes, entries)))
    return done, skipped


def ran_line(done: Sequence[Evaluated], skipped: Sequence[LogProbes]) -> str:
    """How many logs ran, of which kind, and which were skipped."""
    shared = sum(e.probes.log.startswith(SHARED_PREFIX) for e in done)
    line = (
        f"{len(done)} logs ran: {len(done) - shared} sample logs of our own (`samples/`) and "
        f"{shared} shared transcripts (`../shared/transcripts`)"
    )
    if skipped:
        line += f"; skipped (absent): {', '.join(p.name for p in skipped)}"
    return line + "."


def generated(done: Sequence[Evaluated], skipped: Sequence[LogProbes]) -> list[str]:
    """The part of ``docs/briefs.md`` below ``GENERATED``: the count, the table, each brief."""
    lines = ["## Scored against the probes", "", ran_line(done, skipped), ""]
    lines += [*table([e.score for e in done]), "", "## The briefs"]
    for e in done:
        lines += ["", *section(e.probes.name, e.brief)]
    return lines


def write_markdown(doc: Path = DOC) -> None:
    """Rewrite ``doc`` below its ``GENERATED`` line (the text above it is written by hand) with
    this run's count, table and briefs; raise ``ValueError`` when the line is missing."""
    text = doc.read_text(encoding="utf-8")
    if GENERATED not in text:
        raise ValueError(f"{doc}: no line {GENERATED!r} to write below")
    done, skipped = evaluate()
    head = text.split(GENERATED)[0]
    doc.write_text(f"{head}{GENERATED}\n\n" + "\n".join(generated(done, skipped)) + "\n", "utf-8")
    print(f"wrote {doc}: {ran_line(done, skipped)}")


def run() -> None:
    """Print the probe table for every log whose file is here (shared ones skipped if absent)."""
    print("briefs: the embedded brief of each log against its hand-written probes")
    done, skipped = evaluate()
    for probes in skipped:
        print(f"  skipped {probes.name}: {probes.path()} is absent")
    print("\n".join(table([e.score for e in done])))
