"""``manage.py import_transcript`` on the shared real transcripts.

The expected figures are the "right values" table of ``../shared/transcripts/SOURCES.md``
(main conversation only; subagent and sidechain lines excluded).
"""

from __future__ import annotations

import json
from io import StringIO
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from shared_files import SAMPLES, TRANSCRIPTS

from host.models import Message, Session, SessionEvent, SessionStatus, Workspace

pytestmark = pytest.mark.django_db


# file stem: (uncached input, output, cache read, cache write, cumulative, context, compactions,
#             latest model, cwd) — SOURCES.md, "The right values".
RIGHT_VALUES: dict[str, tuple[int, int, int, int, int, int, int, str, str]] = {
    "claude-code-2.1-auto-compact": (
        180, 38_899, 14_771_617, 349_474, 15_160_170, 77_334, 1, "claude-opus-4-6",
        "/home/USER/projects/spotter-worktrees/spotter-gqc",
    ),
    "claude-code-1.0-inline-sidechains": (
        373, 2_636, 161_313, 6_672, 170_994, 21_552, 0, "claude-sonnet-4-20250514",
        "/path/to/Demo",
    ),
    "claude-code-1.0-short": (
        64, 2_003, 190_261, 26_074, 218_402, 26_080, 0, "claude-sonnet-4-20250514",
        "/path/to/Demo",
    ),
    "codex-0.125-rollout": (
        1_126_300, 9_118, 4_929_536, 0, 6_064_954, 131_573, 0, "gpt-5.5",
        "/Users/Sample_User/repos/codemie-ai/codemie-code",
    ),
}  # fmt: skip
# file stem: (turns, title) — every input the agent answers (docs/design.md "Turns": prompts,
# task notifications, the results of each model call's tool calls, counted once per call) and
# the first prompt's first line.
PROMPTS = {
    "claude-code-2.1-auto-compact": (153, "Implement spotter-gqc"),
    "claude-code-1.0-inline-sidechains": (9, "/orchestrator create TODO app by Next.js"),
    "claude-code-1.0-short": (
        10,
        "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください",
    ),
    "codex-0.125-rollout": (66, "show tools"),
}


# A log for the command's behaviour whatever the log: the project's own, present in every clone.
ANY_LOG = SAMPLES / "claude-code-1.x-sidechains.jsonl"


def transcript(stem: str) -> Path:
    """Return the shared transcript ``stem``.jsonl, skipping the test when it is absent."""
    path = TRANSCRIPTS / f"{stem}.jsonl"
    if not path.is_file():
        pytest.skip(f"shared transcripts not found at {TRANSCRIPTS.resolve()} ({path.name})")
    return path


def import_json(*paths: Path, owner: str | None = None) -> list[dict[str, Any]]:
    """Run the command with ``--json`` and return the printed objects."""
    out = StringIO()
    args = [str(path) for path in paths] + ["--json"]
    if owner is not None:
        args += ["--owner", owner]
    call_command("import_transcript", *args, stdout=out, stderr=StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def log_size() -> tuple[int, int, int, int]:
    return (
        Session.objects.count(),
        Message.objects.count(),
        SessionEvent.objects.count(),
        Workspace.objects.count(),
    )


@pytest.mark.parametrize("stem", sorted(RIGHT_VALUES))
def test_json_figures_equal_the_right_values(stem: str) -> None:
    uncached, output, read, write, cumulative, context, compactions, model, cwd = RIGHT_VALUES[stem]

    [report] = import_json(transcript(stem))

    assert report["usage"] == {
        "uncached_input": uncached,
        "output": output,
        "cache_read": read,
        "cache_write": write,
    }
    assert report["tokens"] == {
        "context": {"value": context, "basis": "context", "label": "exact"},
        "cumulative": {"value": cumulative, "basis": "cumulative", "label": "exact"},
    }
    assert report["compactions"] == compactions
    assert report["model"] == model
    assert report["workspace"] == cwd
    session = Session.objects.get(pk=report["session"])
    assert session.workspace is not None
    assert (session.cwd, session.workspace.path, session.model) == (cwd, cwd, model)
    assert session.parent is None
    assert session.status == SessionStatus.IDLE
    assert report["messages"] == session.messages.count() > 0


@pytest.mark.parametrize("stem", sorted(PROMPTS))
def test_turns_count_the_inputs_answered_and_the_first_prompt_titles_the_session(stem: str) -> None:
    turns, title = PROMPTS[stem]

    [report] = import_json(transcript(stem))

    session = Session.objects.get(pk=report["session"])
    assert report["turns"] == session.turns == turns
    assert session.title == title
    assert not session.blank
    prompts = session.messages.filter(starts_turn=True).values_list("seq", flat=True)
    starts = session.events.filter(kind="turn-start").values_list("data", flat=True)
    assert [start["message_seq"] for start in starts] == list(prompts)


def test_2x_subagent_files_become_finished_subagents_of_the_main() -> None:
    [report] = import_json(transcript("claude-code-2.1-auto-compact"))

    main = Session.objects.get(pk=report["session"])
    subagents = {s.external_id: s for s in main.subagents.all()}
    assert set(subagents) == {
        f"{main.external_id}:agent-a881341",
        f"{main.external_id}:agent-acompact-fffbd0",
    }
    assert {s.status for s in subagents.values()} == {SessionStatus.FINISHED}
    assert {s.workspace_id for s in subagents.values()} == {main.workspace_id}
    helper = subagents[f"{main.external_id}:agent-a881341"]
    assert helper.model == "claude-sonnet-4-5-20250929"
    assert helper.messages.count() == 8
    assert helper.usage.output_tokens > 0


def test_1x_inline_sidechains_become_finished_subagents_of_the_main() -> None:
    [report] = import_json(transcript("claude-code-1.0-inline-sidechains"))

    main = Session.objects.get(pk=report["session"])
    subagents = list(main.subagents.all())
    assert len(subagents) == 5  # five Task calls, each one sidechain
    assert {s.status for s in subagents} == {SessionStatus.FINISHED}
    assert all(s.external_id.startswith(f"{main.external_id}:sidechain-") for s in subagents)
    assert any(s.title.startswith("Create React components") for s in subagents)
    assert not main.messages.filter(content__startswith="Create React components").exists()


def test_compaction_marks_older_messages_and_keeps_the_summary() -> None:
    [report] = import_json(transcript("claude-code-2.1-auto-compact"))

    session = Session.objects.get(pk=report["session"])
    event = session.events.get(kind="compaction")
    assert event.data["trigger"] == "auto"
    assert event.data["summary"].startswith("This session is being continued")
    assert not session.messages.filter(seq__gt=event.seq, compacted=True).exists()
    assert not session.messages.filter(seq__lt=event.seq, compacted=False).exists()


def test_model_selections_are_logged_from_the_transcript() -> None:
    [report] = import_json(transcript("codex-0.125-rollout"))

    session = Session.objects.get(pk=report["session"])
    selections = list(session.events.filter(kind="model-selection").values_list("data", flat=True))
    assert selections == [{"model": "gpt-5.5", "source": "transcript"}]
    assert session.context_window == 258_400


def test_reimport_adds_nothing_and_says_so() -> None:
    path = ANY_LOG
    import_json(path)
    before = log_size()

    out, err = StringIO(), StringIO()
    call_command("import_transcript", str(path), "--json", stdout=out, stderr=err)

    assert log_size() == before
    assert json.loads(out.getvalue()) == {
        "path": str(path),
        "skipped": "already-imported",
        "session": str(Session.objects.get(parent=None).pk),
    }
    assert err.getvalue() == ""


def test_reimport_without_json_says_so_in_a_sentence() -> None:
    path = transcript("claude-code-1.0-short")
    import_json(path)
    err = StringIO()
    call_command("import_transcript", str(path), stdout=StringIO(), stderr=err)
    assert "already imported as session" in err.getvalue()


def test_an_unreadable_line_is_skipped_and_reported_and_the_rest_imported(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.jsonl"
    with ANY_LOG.open("rb") as source:
        good = list(islice(source, 20))
    broken.write_bytes(b"".join(good[:-1]) + b'{"type": "user", "message": \n' + good[-1])
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(good))

    [report] = import_json(broken)

    [note] = report["damaged_lines"]
    assert note.startswith(f"{broken}:20: skipped: not valid JSON")
    imported = log_size()
    Session.objects.all().delete()
    import_json(whole)
    assert log_size() == imported  # line 21 repeats line 20's record: nothing is missing


def test_line_missing_a_required_key_aborts_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "missing.jsonl"
    with ANY_LOG.open(encoding="utf-8") as source:
        lines = list(islice(source, 5))
    line = json.loads(lines[3])
    del line["message"]
    lines[3] = json.dumps(line) + "\n"
    broken.write_text("".join(lines), encoding="utf-8")

    with pytest.raises(CommandError, match=rf"{broken}:4: missing object \"message\""):
        import_json(broken)

    assert log_size() == (0, 0, 0, 0)


def test_other_files_still_import_when_one_fails(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n", encoding="utf-8")
    out = StringIO()

    with pytest.raises(CommandError, match=rf"{broken}:1"):
        call_command(
            "import_transcript",
            str(broken),
            str(ANY_LOG),
            "--json",
            stdout=out,
        )

    assert Session.objects.filter(parent=None).count() == 1
    assert len(out.getvalue().splitlines()) == 1


def test_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"absent\.jsonl: cannot read"):
        import_json(tmp_path / "absent.jsonl")


def test_owner_defaults_to_the_demo_user_who_can_sign_in() -> None:
    import_json(ANY_LOG)

    demo = get_user_model().objects.get(username="demo")
    assert demo.check_password("demo")
    assert Session.objects.filter(owner=demo).exists()


def test_owner_set_owns_sessions_and_workspace() -> None:
    ada = get_user_model().objects.create_user("ada", password="x")

    [report] = import_json(ANY_LOG, owner="ada")

    session = Session.objects.get(pk=report["session"])
    assert session.owner == ada
    assert session.workspace is not None
    assert session.workspace.owner == ada


def test_unknown_owner_is_refused_and_nothing_imported() -> None:
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        import_json(ANY_LOG, owner="nobody")

    assert log_size() == (0, 0, 0, 0)


def test_same_transcript_imports_once_per_owner() -> None:
    get_user_model().objects.create_user("ada", password="x")
    path = ANY_LOG

    import_json(path)
    import_json(path, owner="ada")

    assert Session.objects.filter(parent=None).count() == 2


def test_readable_summary_without_json() -> None:
    out = StringIO()

    call_command("import_transcript", str(ANY_LOG), stdout=out)

    line = out.getvalue().strip()
    assert line.startswith("Imported session ")
    assert "tokens context 28403 (exact), cumulative 349832 (exact; "  # samples/README.md in line
