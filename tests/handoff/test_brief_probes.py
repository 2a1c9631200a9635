"""The brief evaluation (``bench/briefs.py``): the scorer's rules on a brief written here, then
the embedded brief of every probed log against its probes.

The targets — every probe held, no false item in any field, every "(log #N)" pointer backing
its claim, the finished state right — hold on every probed log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import briefs
from bench.briefs import Entry, LogProbes, Probe

pytestmark = pytest.mark.django_db

EPIC = LogProbes(
    name="epic",
    log="samples/epic.jsonl",
    finished=True,
    probes={
        "constraints": (Probe("never --no-verify", ("--no-verify",)),),
        "artifacts": (
            Probe("formats.py", ("ledgerline/formats.py",)),
            Probe("cli.py", ("ledgerline/cli.py",)),
        ),
    },
    closed=(Probe("E-1 closed", ("E-1",)), Probe("push fixed", ("git push 2>&1",))),
    verified_by=(Probe("tests pass", ("pytest -q", ("15 passed", "16 passed"))),),
    must_not={
        "artifacts": (Probe("the draft was deleted", ("draft.md",)),),
        "decisions": (Probe("the rejected option", ("pandas",)),),
    },
)


def brief(**fields: Any) -> dict[str, Any]:
    empty: dict[str, Any] = {name: [] for name in briefs.BRIEF_FIELDS}
    return {**empty, "goal": "Implement epic E-1", **fields}


def test_a_term_matches_whole_ids_paths_and_words_whatever_the_case() -> None:
    epic = Probe("E-1 closed", ("E-1",))
    assert epic.held_by("Close E-1 (EPIC) after all subtasks")
    assert epic.held_by("e-1: close it.")
    assert not epic.held_by("E-1.2: --columns option")
    assert not epic.held_by("E-12 is another epic")
    assert Probe("readme", ("README",)).held_by("/home/dev/ledgerline/README.md — edited")
    assert Probe("examples", ("example",)).held_by("the examples are not written yet")
    assert not Probe("export", ("export",)).held_by("reexport the ledger")


def test_a_probe_needs_every_term_and_one_of_each_terms_alternatives() -> None:
    probe = Probe("full run", ("pytest -q", ("15 passed", "16 passed")))

    assert probe.held_by("`python -m pytest -q` → 16 passed in 0.44s")
    assert not probe.held_by("`python -m pytest -q` → 1 failed, 14 passed")
    assert not probe.held_by("16 passed")


def test_the_score_counts_recall_per_field_and_names_what_is_missed() -> None:
    score = briefs.score(
        brief(
            constraints=["Fix the issues, never use --no-verify"],
            artifacts=["/home/dev/ledgerline/ledgerline/cli.py — edited"],
            next_steps=["The session reports its work finished; wait for the next request."],
        ),
        EPIC,
    )

    assert score.recall == {"constraints": (1, 1), "artifacts": (1, 2)}
    assert score.missed == ["artifacts: formats.py"]
    assert (score.false_items, score.bad_pointers, score.finished_right) == ([], [], True)
    assert not score.perfect


def test_pending_items_the_log_closed_are_false_items() -> None:
    pending = ["`git push 2>&1` → exit code 128", "E-1 (EPIC): close after all subtasks are done"]

    score = briefs.score(brief(pending=[*pending, "E-1.4: not in the log's closed list"]), EPIC)

    assert score.false == {"pending": pending}
    assert score.listed == 3


def test_verified_items_no_verifying_run_backs_are_false_items() -> None:
    verified = ["`python -m pytest -q` → 15 passed", "the export keeps the row order (stated)"]

    score = briefs.score(brief(verified=verified, next_steps=["All done."]), EPIC)

    assert score.false_items == ["verified: the export keeps the row order (stated)"]
    assert score.finished_right


def test_items_holding_what_a_field_must_not_say_are_false_items_of_that_field() -> None:
    score = briefs.score(
        brief(
            decisions=["Switching to pandas instead of csv (compaction summary)"],
            artifacts=["/w/ledgerline/draft.md — written", "/w/ledgerline/cli.py — edited"],
            uncertainties=["tried, did not work: switching to pandas"],
        ),
        EPIC,
    )

    assert score.false == {
        "decisions": ["Switching to pandas instead of csv (compaction summary)"],
        "artifacts": ["/w/ledgerline/draft.md — written"],
    }
    assert score.listed == 3  # decisions and artifacts; uncertainties are not checked here


def test_a_pointer_must_name_an_entry_and_a_verified_ones_a_success_showing_its_outcome() -> None:
    entries = {
        4: Entry("user", "Never use --no-verify."),
        7: Entry("tool", "...............\n15 passed in 0.40s", False),
        9: Entry("tool", "ruff....Failed\n15 passed", True),
        11: Entry("tool", "Exit code 1\n1 failed, 14 passed"),
        13: Entry("tool", "", None),
    }
    verified = [
        "`python -m pytest -q` → 15 passed in 0.40s (log #7)",
        "`pytest -q` → 15 passed (log #9)",
        "`pytest -q` → 16 passed (log #11)",
        "`pytest -q` → exit code 0 (log #11)",
        "`pytest -q` → exit code 0 (log #13)",
    ]
    constraints = ["Never use --no-verify. (log #4)", "Always rebase. (log #5)"]

    score = briefs.score(brief(verified=verified, constraints=constraints), EPIC, entries)

    assert score.pointers == 7
    assert score.bad_pointers == [
        "constraints: Always rebase. (log #5)",
        "verified: `pytest -q` → 15 passed (log #9)",
        "verified: `pytest -q` → 16 passed (log #11)",
        "verified: `pytest -q` → exit code 0 (log #11)",
    ]
    assert not score.perfect


def test_a_verified_items_pointers_to_later_edits_must_name_results_not_flagged() -> None:
    entries = {
        7: Entry("tool", "15 passed in 0.40s", False),
        8: Entry("tool", "The file /w/tests/test_cli.py has been updated.", False),
        9: Entry("tool", "<tool_use_error>String not found</tool_use_error>", True),
    }
    edited = "`pytest -q` → 15 passed in 0.40s (log #7), before later edits to tests/test_cli.py"
    verified = [f"{edited} (log #8)", f"{edited} (log #9)", f"{edited} (log #10)"]

    score = briefs.score(brief(verified=verified), EPIC, entries)

    assert score.pointers == 6
    assert score.bad_pointers == [f"verified: {edited} (log #9)", f"verified: {edited} (log #10)"]


def test_a_perfect_brief_scores_perfect() -> None:
    score = briefs.score(
        brief(
            constraints=["never use --no-verify"],
            artifacts=["/w/ledgerline/formats.py — written", "/w/ledgerline/cli.py — edited"],
            next_steps=["The work is finished: wait for the user's next request."],
        ),
        EPIC,
    )

    assert score.perfect


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("[1, ", "not valid JSON"),
        ([], "holds one JSON object"),
        ({"finished": True}, "needs 'log'"),
        ({"log": "x.jsonl", "finished": True, "probes": []}, "'probes' maps brief fields"),
        ({"log": "x.jsonl", "finished": True, "probes": {"todo": []}}, "unknown brief field"),
        (
            {"log": "x.jsonl", "finished": True, "probes": {"goal": [{"fact": "x", "terms": []}]}},
            "needs a non-empty list of 'terms'",
        ),
        (
            {"log": "x.jsonl", "finished": False, "closed": [{"fact": "x", "terms": [["a", 1]]}]},
            "a term is a string or a list of strings",
        ),
    ],
)
def test_a_malformed_probe_file_is_refused_naming_the_file(
    tmp_path: Path, content: Any, error: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")

    with pytest.raises(ValueError, match=rf"^bad\.json: .*{error}"):
        briefs.load(path)


def test_the_table_prints_one_row_per_log_and_every_miss() -> None:
    score = briefs.score(
        brief(pending=["`git push 2>&1` → exit code 128 (log #3)"]), EPIC, {2: Entry("tool", "")}
    )

    lines = briefs.table([score])

    assert lines[2] == "| epic | — | — | 0/1 | 0/2 | — | — | — | — | 1/1 | 0/1 | WRONG |"
    assert "- epic: missed artifacts: cli.py" in lines
    assert "- epic: false pending: `git push 2>&1` → exit code 128 (log #3)" in lines
    assert "- epic: bad pointer in pending: `git push 2>&1` → exit code 128 (log #3)" in lines
    assert lines[-1] == "- epic: the finished state is wrong"


def test_the_table_ends_with_a_row_over_all_logs_when_there_are_several() -> None:
    wrong = briefs.score(brief(pending=["`git push 2>&1` → exit code 128"]), EPIC)
    right = briefs.score(brief(constraints=["never --no-verify"], next_steps=["Done."]), EPIC)

    lines = briefs.table([wrong, right])

    assert lines[4] == "| all logs | — | — | 1/2 | 0/4 | — | — | — | — | 1/1 | 0/0 | 1/2 right |"


@pytest.mark.parametrize("probes", briefs.load_all(), ids=lambda probes: probes.name)
def test_the_brief_of_each_probed_log_holds_its_probes(probes: LogProbes) -> None:
    if not probes.path().is_file():  # a shared transcript, or a log that comes with a fix
        pytest.skip(f"{probes.path()} is not in this checkout")
    brief, entries = briefs.brief_of(probes.path())
    score = briefs.score(brief, probes, entries)
    doc = briefs.DOC.read_text(encoding="utf-8").splitlines()

    assert briefs.row(score) in doc, "docs/briefs.md is stale: python -m bench briefs --markdown"
    start = doc.index(briefs.section(probes.name, brief)[0])
    shown = briefs.section(probes.name, brief)
    assert doc[start : start + len(shown)] == shown, "docs/briefs.md shows an older brief"

    assert briefs.table([score])[3:] == []
    assert score.perfect


def test_docs_briefs_md_was_written_from_every_probed_log() -> None:
    doc = briefs.DOC.read_text(encoding="utf-8")
    names = [probes.name for probes in briefs.load_all()]
    generated = doc.split(briefs.GENERATED)[1]

    rows = [line.split(" | ")[0].removeprefix("| ") for line in generated.splitlines()]
    assert [name for name in rows if name in names] == names
    assert f"\n{len(names)} logs ran: " in generated
    assert "skipped (absent)" not in generated


def test_write_markdown_keeps_the_text_above_its_line_and_refuses_a_file_without_it(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "briefs.md"
    doc.write_text("# Briefs\n\nno line to write below\n", "utf-8")

    with pytest.raises(ValueError, match="no line"):
        briefs.write_markdown(doc)
    assert doc.read_text("utf-8") == "# Briefs\n\nno line to write below\n"
