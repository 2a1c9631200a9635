"""The offline brief tells done from open and cites its evidence (docs/design.md, The brief
tells done from open and cites its evidence).

Each defect has a small Claude Code log of its own under ``samples/briefs/`` (written for the
project, named after the defect) and a negative case beside it. Each log is imported as a user
would (``import_transcript``) and the embedded summarizer writes its brief, as a handoff would.
"""

from __future__ import annotations

import functools
import json
import re
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from handoff_support import hand_on
from shared_files import ROOT

from handoff import summarizer
from handoff.core.offline_brief import NOT_DONE_SINCE
from host.agent import compaction_summary
from host.demo import seed_demo
from host.intake import post_message
from host.models import Message, Role, Session
from host.services import SessionController

pytestmark = pytest.mark.django_db

SAMPLES = ROOT / "samples" / "briefs"
CITED = re.compile(r" \(log #(\d+)\)$")
SUMMARY_CITED = " (compaction summary)"
FINISHED = "The session reports its work finished; wait for the user's next request."


def imported(name: str, folder: str = "briefs") -> Session:
    out = StringIO()
    path = ROOT / "samples" / folder / f"{name}.jsonl"
    call_command("import_transcript", str(path), "--json", stdout=out, stderr=StringIO())
    return Session.objects.get(pk=json.loads(out.getvalue().splitlines()[0])["session"])


def brief_of(session: Session) -> dict[str, Any]:
    return summarizer.summarize(session, SessionController().effective_context(session))


def sample_brief(name: str) -> dict[str, Any]:
    return brief_of(imported(name))


def cited_entry(session: Session, item: str) -> Message:
    """The message an item cites with its "(log #N)" suffix (fails when there is none)."""
    match = CITED.search(item)
    assert match, f"no log entry cited: {item}"
    return Message.objects.get(session=session, seq=int(match.group(1)))


def test_a_failure_is_closed_by_a_later_success_of_the_same_intent():
    brief = sample_brief("failure-closed-by-later-success")

    assert brief["pending"] == []
    commands = [item.split("`")[1] for item in brief["verified"]]
    assert commands == [
        "pytest -q",
        'git commit -m "Search box for the notes list"',
        "git push --set-upstream origin search-box 2>&1",
    ]


def test_a_success_on_another_target_does_not_close_a_failure():
    brief = sample_brief("failure-other-target-stays-open")

    (pending,) = brief["pending"]
    assert pending.startswith("`pytest tests/test_tags.py -q` → 1 failed, 2 passed")
    assert [item.split("`")[1] for item in brief["verified"]] == ["pytest tests/test_search.py -q"]


def test_the_users_answer_to_a_question_is_a_decision_and_its_rule_a_constraint():
    brief = sample_brief("ask-user-question-answer")

    answer = (
        "The pre-commit hook fails on 3 lint errors. How should I proceed? → "
        "fix the issues, never use --no-verify"
    )
    assert [CITED.sub("", item) for item in brief["decisions"]] == [answer]
    assert [CITED.sub("", item) for item in brief["constraints"]] == [answer]


def test_an_answer_that_states_no_rule_is_a_decision_only():
    brief = sample_brief("ask-user-question-no-rule")

    assert [CITED.sub("", item) for item in brief["decisions"]] == [
        "Which format should the export use for dates? → ISO 8601"
    ]
    assert brief["constraints"] == []


def test_summary_tasks_closed_later_leave_a_finished_session_with_nothing_pending():
    brief = sample_brief("compaction-pending-closed")

    assert brief["pending"] == []
    assert brief["next_steps"][0] == FINISHED


def test_a_task_closed_under_another_id_stays_pending():
    brief = sample_brief("compaction-pending-other-id")

    assert brief["pending"] == [f"E-1 (EPIC): close after all subtasks are done — {NOT_DONE_SINCE}"]
    assert FINISHED not in brief["next_steps"]


def test_files_edited_before_a_compaction_and_committed_after_it_are_artifacts():
    brief = sample_brief("compaction-committed-files")

    files = "/home/dev/projects/notes-app/"
    assert brief["artifacts"][1:] == [
        f"{files}src/notes/repository.py — edited, committed",
        f"{files}src/notes/api.py — edited, committed",
        f"{files}tests/test_repository.py — edited, committed",
    ]


def test_a_commit_that_failed_adds_no_artifact():
    brief = sample_brief("compaction-commit-failed")

    assert brief["artifacts"] == [  # the file edited before the compaction, not the one named
        "workspace: /home/dev/projects/notes-app",
        "/home/dev/projects/notes-app/src/notes/repository.py — edited",
    ]
    assert "its latest run failed" in brief["pending"][0]


def test_outcomes_stated_only_in_prose_are_pending_or_uncertain_never_dropped():
    session = imported("prose-outcomes")
    brief = brief_of(session)

    assert [CITED.sub("", item) for item in brief["pending"]] == [
        "The docs for the word count are not written yet."
    ]
    assert brief["verified"] == []
    assert CITED.sub("", brief["uncertainties"][0]) == "stated, not verified: the stats tests pass."
    assert cited_entry(session, brief["uncertainties"][0]).role == Role.ASSISTANT


def test_a_success_a_command_verified_is_not_an_uncertainty():
    brief = sample_brief("prose-outcome-verified")

    assert [item.split("`")[1] for item in brief["verified"]] == ["pytest tests/test_stats.py -q"]
    assert not any("stated, not verified" in item for item in brief["uncertainties"])


def test_a_quote_is_cut_at_a_sentence_or_word_boundary():
    session = imported("prose-outcomes")
    last = session.messages.filter(role=Role.ASSISTANT, tool_name="").last()
    assert last is not None

    state = brief_of(session)["next_steps"][-1]

    kept = state.split("“", 1)[1].removesuffix("…”").rstrip()
    text = " ".join(last.content.split())
    assert text.startswith(kept) and len(kept) < len(text)
    assert text[len(kept)] == " "


@pytest.mark.parametrize("name", sorted(path.stem for path in SAMPLES.glob("*.jsonl")))
def test_every_verified_item_decision_and_rule_cites_the_entry_that_backs_it(name: str):
    """A "… (log #N)" names the entry; a verified command's is its result."""
    session = imported(name)
    brief = brief_of(session)

    for item in brief["verified"]:
        entry = cited_entry(session, item)
        assert entry.role == Role.TOOL
        assert item.split(" → ")[1].split()[0].strip("*[") in entry.content or "exit code 0" in item
    summary = compaction_summary(session)
    for item in brief["decisions"] + brief["constraints"]:
        if item.endswith(SUMMARY_CITED):  # a rule the compaction summary states or quotes
            assert item.removesuffix(SUMMARY_CITED) in " ".join(summary.split())
            continue
        said = CITED.sub("", item).split(" → ")[-1]
        assert said in cited_entry(session, item).content


def test_the_demo_conversation_gets_a_truthful_brief():
    (session, *_) = seed_demo()

    brief = brief_of(session)

    assert brief["verified"][-1].startswith("`python -m unittest` → Ran 22 tests in 1.031s OK")
    assert [CITED.sub("", item) for item in brief["pending"]] == [
        "the examples for --days and --json are not written yet.",
        "Not yet verified against the real service",
    ]
    rules = [CITED.sub("", item) for item in brief["constraints"]]
    assert "Retry twice with backoff, then fail with a clear message." in rules
    assert "Keep the one-line output for a single day." in rules
    # A feature request is no rule: "max 7" says what was asked for, once.
    assert not [item for item in rules + brief["decisions"] if "3-day forecast" in item]
    assert brief["next_steps"][0] == (
        "As the last assistant message says: Next: finish the README examples and run the CLI "
        "once against the live API."
    )
    assert brief["next_steps"][-1].endswith("try again in a minute'). …”")


def test_a_second_hop_carries_the_requests_the_offline_agent_only_acknowledged(
    immediate_tasks, django_capture_on_commit_callbacks
):
    (session, *_) = seed_demo()
    settle = functools.partial(django_capture_on_commit_callbacks, execute=True)
    _, successor = hand_on(session, 1, settle=settle)
    with settle():  # posted to the old conversation: relayed to its successor
        post_message(session, content="Please add the README examples for --days now.")
    with settle():
        post_message(successor, content="And sort the --json output by date.")

    brief = brief_of(hand_on(successor, 1, settle=settle)[0])

    said = [item for field in ("next_steps", "pending") for item in brief[field]]
    assert not [item for item in said if "Offline agent" in item or "acknowledgement" in item]
    assert brief["next_steps"][0].startswith(
        "Answer the latest request first: And sort the --json output by date. (log #"
    )
    assert brief["next_steps"][1] == (
        "As the last assistant message says: Next: finish the README examples and run the CLI "
        "once against the live API."
    )
    assert [CITED.sub("", item) for item in brief["pending"][:2]] == [
        "requested, not answered yet: Please add the README examples for --days now.",
        "requested, not answered yet: And sort the --json output by date.",
    ]


def test_verified_holds_only_runs_the_log_shows_passed():
    session = imported("failed-runs", "precision")
    brief = brief_of(session)

    commands = [item.split("`")[1] for item in brief["verified"]]
    assert commands == [
        "mypy src 2>&1 | tail -1",
        "ruff check tests | tail -1",
        "pytest -q 2>&1 | tail -1",
    ]
    for item in brief["verified"]:
        entry = cited_entry(session, item)
        assert entry.tool_error is not True
        assert item.split(" → ")[1].removesuffix(f" (log #{entry.seq})") in entry.content
    pending = [item.split("`")[1] for item in brief["pending"]]
    assert pending == [
        "ruff check src | tail -3",
        'git add src/ledger/export.py && git commit -m "CSV export"',
    ]
    assert "ran, outcome not shown: `make docs 2>&1 | tail -2`" in brief["uncertainties"][0]
    assert not any("committed" in item for item in brief["artifacts"])
