"""``manage.py import_transcript`` on the project's own sample logs (``samples/``): every format the
importers read, run in any clone, ``../shared`` or not.

The right values are ``samples/README.md``'s, read from there: its table for each file's
figures, "How they add up" for the subagents' and the damaged lines'.
"""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from shared_files import SAMPLES

from host.models import Message, Session, SessionStatus

pytestmark = pytest.mark.django_db

USAGE_KEYS = ("uncached_input", "output", "cache_read", "cache_write")
README = (SAMPLES / "README.md").read_text(encoding="utf-8")
# "How they add up", on one line: a figure is written with spaces between thousands.
ADDED_UP = " ".join(README.split("How they add up:", 1)[1].split())
NUMBER = r"(\d{1,3}(?: \d{3})*)"


def figure(text: str) -> int:
    return int(text.replace(" ", ""))


def right_values(stem: str) -> dict[str, Any]:
    """The right values table's row for ``stem``, by column."""
    table = README.split("| file | uncached input", 1)[1].split("\n\n", 1)[0]
    heads = ["file", "uncached input", *(h.strip() for h in table.splitlines()[0].split("|")[1:-1])]
    row = next(line for line in table.splitlines() if line.startswith(f"| {stem} |"))
    return dict(zip(heads, (cell.strip() for cell in row.split("|")[1:-1]), strict=True))


def usage_after(label: str) -> tuple[int, ...]:
    """The four buckets "u / o / r / w" written after ``label`` in "How they add up"."""
    found = re.search(re.escape(label) + r".*?(?<![\w.-])" + r" / ".join([NUMBER] * 4), ADDED_UP)
    assert found is not None, f"no usage after {label!r} in samples/README.md"
    return tuple(figure(group) for group in found.groups())


def run(*paths: Path) -> tuple[list[dict[str, Any]], str]:
    """Run the command with ``--json``; return the printed objects and stderr."""
    out, err = StringIO(), StringIO()
    call_command("import_transcript", *map(str, paths), "--json", stdout=out, stderr=err)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def usage_of(session: Session) -> tuple[int, ...]:
    from host.importers import import_report

    return tuple(import_report(session)["usage"][key] for key in USAGE_KEYS)


STEMS = ("claude-code-1.x-sidechains", "claude-code-2.x-epic", "codex-fork", "claude-code-damaged")


@pytest.mark.parametrize("stem", STEMS)
def test_json_figures_equal_the_right_values(stem: str) -> None:
    right = right_values(stem)

    [report], _ = run(SAMPLES / f"{stem}.jsonl")

    buckets = ("uncached input", "output", "cache read", "cache write")
    assert report["usage"] == {
        key: figure(right[b]) for key, b in zip(USAGE_KEYS, buckets, strict=True)
    }
    assert report["tokens"] == {
        "context": {"value": figure(right["context"]), "basis": "context", "label": "exact"},
        "cumulative": {
            "value": figure(right["cumulative"]),
            "basis": "cumulative",
            "label": "exact",
        },
    }
    assert (report["compactions"], report["turns"]) == (
        int(right["compactions"]),
        int(right["turns"]),
    )
    assert (report["model"], report["workspace"]) == (right["latest model"], right["cwd"])
    session = Session.objects.get(pk=report["session"])
    assert (session.parent, session.status, session.turns) == (
        None,
        SessionStatus.IDLE,
        report["turns"],
    )


def test_2x_subagent_files_become_finished_subagents_of_the_main() -> None:
    [report], _ = run(SAMPLES / "claude-code-2.x-epic.jsonl")

    main = Session.objects.get(pk=report["session"])
    subagents = {s.external_id.split(":")[1]: s for s in main.subagents.all()}
    assert set(subagents) == {"agent-a3f9e21", "agent-acompact-7c1d05"}
    assert {s.status for s in subagents.values()} == {SessionStatus.FINISHED}
    helper, compaction = subagents["agent-a3f9e21"], subagents["agent-acompact-7c1d05"]
    model = re.search(r"`agent-a3f9e21` \(([\w.-]+),", ADDED_UP)
    assert model is not None and helper.model == model.group(1)
    assert usage_of(helper) == usage_after("`agent-a3f9e21`")
    assert (helper.turns, helper.messages.count()) == (3, 6)
    assert usage_of(compaction) == usage_after("`agent-acompact-7c1d05`")


def test_1x_inline_sidechain_becomes_a_finished_subagent_of_the_main() -> None:
    [report], _ = run(SAMPLES / "claude-code-1.x-sidechains.jsonl")

    main = Session.objects.get(pk=report["session"])
    [sidechain] = main.subagents.all()
    assert sidechain.status == SessionStatus.FINISHED
    assert sidechain.external_id.startswith(f"{main.external_id}:sidechain-")
    assert sidechain.title.startswith("Find where tidechart parses its command-line arguments")
    assert usage_of(sidechain) == usage_after("sidechain are its subagent's:")
    assert not main.messages.filter(content__startswith="Find where tidechart parses").exists()


def test_compaction_marks_older_messages_and_keeps_the_summary() -> None:
    [report], _ = run(SAMPLES / "claude-code-2.x-epic.jsonl")

    session = Session.objects.get(pk=report["session"])
    event = session.events.get(kind="compaction")
    assert event.data["trigger"] == "auto"
    assert "7. Pending Tasks:" in event.data["summary"]
    assert not session.messages.filter(seq__gt=event.seq, compacted=True).exists()
    assert not session.messages.filter(seq__lt=event.seq, compacted=False).exists()


def test_a_forked_rollout_keeps_its_own_prompts_model_and_window() -> None:
    [report], _ = run(SAMPLES / "codex-fork.jsonl")

    session = Session.objects.get(pk=report["session"])
    prompts = session.messages.filter(starts_turn=True, role="user")
    assert [p.content.split(".")[0] for p in prompts] == [
        "Add a --days option and a --json flag",
        "The API times out now and then",
    ]
    assert not Message.objects.filter(content__startswith="Build skycast").exists()
    assert session.model == "gpt-5.2-codex"
    assert (session.context_window,) == tuple(
        figure(n) for n in re.findall(r"Context window " + NUMBER, ADDED_UP)
    )


def test_a_damaged_log_imports_every_readable_record_and_reports_each_damaged_line() -> None:
    path = SAMPLES / "claude-code-damaged.jsonl"

    [report], _ = run(path)

    assert report["messages"] == int(re.findall(r"(\d+) records imported", ADDED_UP)[0])
    assert report["damaged_lines"] == [
        f"{path}:4: repaired: lone surrogates stored as U+FFFD",
        f"{path}:9: repaired: NUL padding removed",
        f"{path}:11: skipped: not valid JSON (Expecting value: line 1 column 527 (char 526))",
    ]
    assert Message.objects.filter(content__contains="1;Ren\ufffd Dupr\ufffd;Orl\ufffdans").exists()
    assert Message.objects.filter(content__contains="René Dupré, Orléans").exists()
