"""The brief evaluation (issue 16, Deliver 3): each log's brief scored against hand-written probes.

``samples/probes/<log>.json`` holds, for one log (a sample of ours, ``samples/…``, or a shared
transcript, ``shared:transcripts/…``), what a successor needs, written by hand from reading the
log (samples/README.md):

- ``finished``: whether the log ends with the work done;
- ``probes``: per brief field (seed 000, Brief schema), the facts the field must hold, each as
  ``{"fact", "terms"}``: a brief item holds the fact when it contains every term (a term is a
  string, or a list of alternatives), matched without regard to case or wording around it;
- ``closed``: what the log started and then finished (a failure a later run fixed, a task it
  closed): a Pending item that holds one of these is a *false pending*;
- ``verified_by``: the command runs whose output in the log verified something: a Verified
  item that holds none of these is a *false verified*.

The brief is the one ``handoff now`` would seed: the log imported, the embedded summarizer run
on the session's effective context (all inside a rolled-back transaction). The targets are
100 % recall on every field, 0 false pending, 0 false verified, and the finished state right.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from handoff import summarizer
from handoff.core.brief import BRIEF_FIELDS
from host.importers import import_transcript
from host.services import SessionController

ROOT = Path(__file__).resolve().parents[1]
PROBES = ROOT / "samples" / "probes"
SHARED = ROOT.parent / "shared"
SHARED_PREFIX = "shared:"
# A first next step that says the session's work is finished.
FINISHED = re.compile(r"\b(?:finished|complete|completed|done)\b", re.IGNORECASE)

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

    def path(self) -> Path:
        """The log's file: ``samples/…`` under the checkout, ``shared:…`` under ``../shared``."""
        if self.log.startswith(SHARED_PREFIX):
            return SHARED / self.log.removeprefix(SHARED_PREFIX)
        return ROOT / self.log


@dataclass
class Score:
    """How one brief fares against its log's probes."""

    name: str
    recall: dict[str, tuple[int, int]] = field(default_factory=dict)  # field → (held, probes)
    missed: list[str] = field(default_factory=list)
    false_pending: list[str] = field(default_factory=list)
    false_verified: list[str] = field(default_factory=list)
    pending: int = 0
    verified: int = 0
    finished_right: bool = True

    @property
    def perfect(self) -> bool:
        """Every probe held, no false pending or verified item, the finished state right."""
        full = all(held == total for held, total in self.recall.values())
        return full and not self.false_pending and not self.false_verified and self.finished_right


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
    unknown = sorted(set(fields) - set(BRIEF_FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown brief field(s): {', '.join(unknown)}")
    return LogProbes(
        name=path.stem,
        log=data["log"],
        finished=data["finished"],
        probes={name: _probes(raw, f"{where}: {name}") for name, raw in fields.items()},
        closed=_probes(data.get("closed", []), f"{where}: closed"),
        verified_by=_probes(data.get("verified_by", []), f"{where}: verified_by"),
    )


def load_all(folder: Path = PROBES) -> list[LogProbes]:
    """Every probe file of ``folder``, by name."""
    return [load(path) for path in sorted(folder.glob("*.json"))]


def _items(brief: Mapping[str, Any], name: str) -> list[str]:
    value = brief.get(name, [])
    return [value] if isinstance(value, str) else list(value)


def score(brief: Mapping[str, Any], probes: LogProbes) -> Score:
    """Score ``brief`` (a validated brief) against ``probes``: recall per field, false pending,
    false verified, the finished state (Pending empty and a first next step saying so)."""
    result = Score(probes.name)
    for name, facts in probes.probes.items():
        items = _items(brief, name)
        held = [fact for fact in facts if fact.held_in(items)]
        result.recall[name] = (len(held), len(facts))
        result.missed += [f"{name}: {fact.fact}" for fact in facts if fact not in held]
    pending, verified = _items(brief, "pending"), _items(brief, "verified")
    result.pending, result.verified = len(pending), len(verified)
    result.false_pending = [item for item in pending if any(c.held_by(item) for c in probes.closed)]
    result.false_verified = [
        item for item in verified if not any(v.held_by(item) for v in probes.verified_by)
    ]
    steps = _items(brief, "next_steps")
    said_finished = not pending and bool(steps) and FINISHED.search(steps[0]) is not None
    result.finished_right = said_finished == probes.finished
    return result


def brief_of(path: Path) -> dict[str, Any]:
    """Import ``path`` for a new user and return the embedded summarizer's brief of its main;
    nothing stays in the database (a rolled-back transaction), whoever imported it before."""
    with transaction.atomic():
        owner = User.objects.create(username=f"brief-probes-{uuid.uuid4().hex}")
        main = import_transcript(path, owner)[0]
        brief = summarizer.summarize(main, SessionController().effective_context(main))
        transaction.set_rollback(True)
    return brief


COLUMNS = ("goal", "decisions", "constraints", "artifacts", "verified", "pending", "next_steps")


def _cell(recall: Mapping[str, tuple[int, int]], name: str) -> str:
    held, total = recall.get(name, (0, 0))
    return f"{held}/{total}" if total else "—"


def _total(scores: Sequence[Score]) -> Score:
    """One row summing every log's held/probes per field and false items."""
    total = Score("all logs")
    for s in scores:
        for name, (held, probes) in s.recall.items():
            before = total.recall.get(name, (0, 0))
            total.recall[name] = (before[0] + held, before[1] + probes)
        total.false_pending += s.false_pending
        total.false_verified += s.false_verified
        total.pending += s.pending
        total.verified += s.verified
    return total


def _row(s: Score, finished: str) -> str:
    cells = [_cell(s.recall, name) for name in (*COLUMNS, "uncertainties")]
    cells += [f"{len(s.false_pending)}/{s.pending}", f"{len(s.false_verified)}/{s.verified}"]
    return f"| {s.name} | " + " | ".join([*cells, finished]) + " |"


def table(scores: Sequence[Score]) -> list[str]:
    """The Markdown table: recall per field (held/probes), uncertainties, false pending and
    false verified (items/listed), finished right; a last row over all logs when there are
    several; then every miss, log by log."""
    heads = [*COLUMNS, "uncertainties", "false pending", "false verified", "finished"]
    lines = ["| log | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    lines += [_row(s, "right" if s.finished_right else "WRONG") for s in scores]
    if len(scores) > 1:
        right = sum(s.finished_right for s in scores)
        lines.append(_row(_total(scores), f"{right}/{len(scores)} right"))
    for s in scores:
        lines += [f"- {s.name}: missed {miss}" for miss in s.missed]
        lines += [f"- {s.name}: false pending: {item}" for item in s.false_pending]
        lines += [f"- {s.name}: false verified: {item}" for item in s.false_verified]
        if not s.finished_right:
            lines.append(f"- {s.name}: the finished state is wrong")
    return lines


def run() -> None:
    """Print the probe table for every log whose file is here (shared ones skipped if absent)."""
    print("briefs: the embedded brief of each log against its hand-written probes")
    scores = []
    for probes in load_all():
        if not probes.path().is_file():
            print(f"  skipped {probes.name}: {probes.path()} is absent")
            continue
        scores.append(score(brief_of(probes.path()), probes))
    print("\n".join(table(scores)))
