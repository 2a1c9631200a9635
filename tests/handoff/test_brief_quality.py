"""The brief-quality check over the shared real transcripts and the
project's own samples (``samples/``: they run in a clone without ``../shared``).

Each transcript is imported, and the embedded (offline) summarizer writes its brief from the
session's effective context, as a handoff would. The expectations are read from the raw JSONL
by this test itself, not by the summarizer's code: the files edited last, the tasks marked done,
the user's rule statements. The brief must point at the files edited last, hold no URL or
build/vendor path, list no done task as pending, say when the session is finished, keep the
user's constraints, and hold nothing that is not in the log.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from shared_files import SAMPLES, TRANSCRIPTS

from handoff import summarizer
from handoff.core.brief import render_brief
from host.models import Session
from host.services import SessionController

pytestmark = pytest.mark.django_db

# Every shared transcript ends with the work reported done (read by a person, see docs/briefs.md).
FINISHED = {
    "claude-code-2.1-auto-compact": True,
    "claude-code-1.0-inline-sidechains": True,
    "claude-code-1.0-short": True,
    "codex-0.125-rollout": True,
}
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
GENERATED = re.compile(r"/(node_modules|_build|deps|dist|build|target|vendor|\.git)/")
RULE = re.compile(r"\b(only|never|must|always|don't|do not)\b", re.IGNORECASE)
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
CLOSED = re.compile(r"✓ Closed ([\w.-]+)")


@dataclass
class RawLog:
    """What this test reads from a transcript's main conversation by itself."""

    cwd: str = ""
    edited: list[str] = field(default_factory=list)  # in order of touch
    done_tasks: set[str] = field(default_factory=set)
    closed: set[str] = field(default_factory=set)
    user_texts: list[str] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)

    def last_edited(self, count: int) -> list[str]:
        return list(dict.fromkeys(reversed(self.edited)))[:count]


def transcript(stem: str) -> Path:
    """Return the sample or shared transcript ``stem``.jsonl (skip when a shared one is absent)."""
    if (SAMPLES / f"{stem}.jsonl").is_file():
        return SAMPLES / f"{stem}.jsonl"
    path = TRANSCRIPTS / f"{stem}.jsonl"
    if not path.is_file():
        pytest.skip(f"shared transcripts not found at {TRANSCRIPTS.resolve()} ({path.name})")
    return path


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def read_raw(path: Path) -> RawLog:
    raw = RawLog()
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj.get("isSidechain"):
            continue
        raw.strings += strings_in(obj)
        if obj.get("type") == "system" and obj.get("subtype") == "compact_boundary":
            raw.edited.clear()
        read_claude(obj, raw) if "message" in obj else read_codex(obj, raw)
    return raw


def read_claude(obj: dict[str, Any], raw: RawLog) -> None:
    raw.cwd = obj.get("cwd", raw.cwd)
    content = obj["message"].get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "tool_use" and block.get("name") in EDIT_TOOLS:
            raw.edited.append(block["input"].get("file_path", ""))
        elif block.get("type") == "tool_use" and block.get("name") == "TodoWrite":
            todos = block["input"]["todos"]
            raw.done_tasks |= {t["content"] for t in todos if t["status"] == "completed"}
        elif block.get("type") == "tool_result":
            raw.closed |= set(CLOSED.findall(json.dumps(block.get("content"), ensure_ascii=False)))
        elif block.get("type") == "text" and typed_by_the_user(obj, block["text"]):
            raw.user_texts.append(block["text"])


def typed_by_the_user(obj: dict[str, Any], text: str) -> bool:
    """A prompt line: not meta, not a compaction summary, not text the CLI injected."""
    generated = obj.get("isMeta") or obj.get("isCompactSummary") or text.startswith("<")
    return obj["type"] == "user" and not generated


def read_codex(obj: dict[str, Any], raw: RawLog) -> None:
    payload = obj.get("payload", {})
    raw.cwd = (
        payload.get("cwd", raw.cwd) if obj["type"] in ("session_meta", "turn_context") else raw.cwd
    )
    if payload.get("type") == "custom_tool_call" and payload.get("name") == "apply_patch":
        raw.edited += [posixpath.join(raw.cwd, p) for p in PATCH_FILE.findall(payload["input"])]
    elif payload.get("type") == "function_call" and payload.get("name") == "update_plan":
        plan = json.loads(payload["arguments"])["plan"]
        raw.done_tasks |= {step["step"] for step in plan if step["status"] == "completed"}
    elif payload.get("type") == "user_message":
        raw.user_texts.append(payload["message"])


def brief_of(path: Path) -> tuple[dict[str, Any], Session]:
    out = StringIO()
    call_command("import_transcript", str(path), "--json", stdout=out, stderr=StringIO())
    report = json.loads(out.getvalue().splitlines()[0])
    session = Session.objects.get(pk=report["session"])
    context = SessionController().effective_context(session)
    return summarizer.summarize(session, context), session


def problems(brief: dict[str, Any], raw: RawLog, finished: bool) -> list[str]:
    found = []
    paths = [a.split(" — ")[0] for a in brief["artifacts"] if not a.startswith("workspace: ")]
    for edited in raw.last_edited(3):
        if edited not in paths:
            found.append(f"artifacts miss {edited}, one of the files edited last")
    for item in brief["artifacts"]:
        if "://" in item or GENERATED.search(item) or item.endswith("\\n"):
            found.append(f"artifact is a URL or a build/vendor path: {item}")
    for item in brief["pending"]:
        if any(item.startswith(task) for task in raw.done_tasks):
            found.append(f"pending lists a task marked done: {item}")
        if any(task_id in item for task_id in raw.closed):
            found.append(f"pending lists a task closed in the log: {item}")
    says_finished = "finished" in " ".join(brief["next_steps"])
    if says_finished != finished:
        found.append(f"finished is {finished} but the brief says otherwise: {brief['next_steps']}")
    rules = [
        s for text in raw.user_texts for s in re.split(r"(?<=[.!?])\s+", text) if RULE.search(s)
    ]
    for rule in rules:
        if not any(rule.strip() in c for c in brief["constraints"]):
            found.append(f"constraint stated by the user is missing: {rule}")
    return found + untraced(brief, raw)


def untraced(brief: dict[str, Any], raw: RawLog) -> list[str]:
    """Artifacts and commands that do not occur in the log (nothing may be invented)."""
    corpus = "\n".join(raw.strings)
    found = []
    for item in brief["artifacts"]:
        path = item.removeprefix("workspace: ").split(" — ")[0]
        if path not in corpus and path.removeprefix(raw.cwd + "/") not in corpus:
            found.append(f"artifact not in the log: {item}")
    for item in brief["verified"]:
        command = item.split("`")[1].rstrip("…") if item.count("`") >= 2 else item
        if command not in corpus:
            found.append(f"verified command not in the log: {item}")
    return found


@pytest.mark.parametrize("stem", sorted(FINISHED))
def test_the_embedded_brief_passes_the_quality_check(stem: str) -> None:
    path = transcript(stem)
    brief, _ = brief_of(path)

    assert problems(brief, read_raw(path), FINISHED[stem]) == []
    assert brief["artifacts"][1:] and brief["goal"]


# The project's own samples (samples/README.md), run in any clone; whether each ends finished.
SAMPLES_FINISHED = {
    "claude-code-1.x-sidechains": False,
    "claude-code-2.x-epic": True,
    "codex-fork": False,
}


@pytest.mark.parametrize("stem", sorted(SAMPLES_FINISHED))
def test_the_embedded_brief_of_a_sample_passes_the_quality_check(stem: str) -> None:
    path = transcript(stem)
    brief, _ = brief_of(path)

    assert problems(brief, read_raw(path), SAMPLES_FINISHED[stem]) == []
    assert brief["artifacts"][1:] and brief["goal"]


@pytest.mark.parametrize(
    "stem",
    ["claude-code-2.x-epic", "codex-fork", "claude-code-2.1-auto-compact", "codex-0.125-rollout"],
)
def test_a_successors_brief_carries_the_predecessors_goal(stem: str) -> None:
    brief, session = brief_of(transcript(stem))
    successor = [
        {"role": "user", "source_kind": "plugin", "content": render_brief(brief), "tool_name": ""},
        {"role": "user", "source_kind": "relay", "content": "Also update the changelog entry"},
    ]

    goal = summarizer.summarize(session, successor)["goal"]

    assert goal.startswith(brief["goal"].split(" — latest direction: ")[0])
    assert goal.endswith("latest direction: Also update the changelog entry")
