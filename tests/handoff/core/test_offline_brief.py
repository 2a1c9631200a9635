"""The offline summarizer's brief, field by field (docs/spec.md, Brief)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_digest import call, result, say

from handoff.core.brief import render_brief, validate_brief
from handoff.core.offline_brief import NOT_DONE_SINCE, offline_brief
from handoff.core.said import clip, uncited


def todo(*items: tuple[str, str]) -> dict[str, str]:
    return call("TodoWrite", {"todos": [{"content": t, "status": s} for t, s in items]})


def test_goal_is_the_first_substantive_request_plus_the_latest_direction():
    log = [
        say("user", "show tools"),
        say("user", "Port the parser in /w/parser.py to streaming"),
        say("assistant", "Ported."),
        say("user", "did you push?"),
        say("user", "Now add a CLI flag for the buffer size"),
    ]
    assert offline_brief(log, cwd="/w")["goal"] == (
        "Port the parser in /w/parser.py to streaming — latest direction: "
        "Now add a CLI flag for the buffer size"
    )


def test_goal_after_a_compaction_comes_from_the_summarys_primary_request():
    summary = (
        "Summary:\n1. Primary Request and Intent:\n   The user asked to implement gqc.\n\n"
        '6. All user messages:\n   - "Implement gqc"\n   - "new beads were added. tackle them"\n'
    )
    log = [say("system", summary, "compaction"), say("user", "did you push?")]
    assert offline_brief(log, cwd="")["goal"] == (
        "The user asked to implement gqc. — latest direction: new beads were added. tackle them"
    )


def test_constraints_are_the_users_rule_statements():
    log = [say("user", "Write the CLI. Use the standard library only. Don't add a setup.py.")]
    assert offline_brief(log, cwd="")["constraints"] == [
        "Use the standard library only. (log #1)",
        "Don't add a setup.py. (log #1)",
    ]


def test_after_a_compaction_the_rules_of_the_summarys_primary_request_are_kept():
    summary = (
        "Summary:\n1. Primary Request and Intent:\n   Rename the store and keep the API "
        "stable.\n\n2. Current Work:\n   The rename is done.\n"
    )
    log = [say("system", summary, "compaction"), say("assistant", "Committed.")]
    assert offline_brief(log, cwd="")["constraints"] == [
        "Rename the store and keep the API stable. (compaction summary)"
    ]


def test_decisions_are_stated_decisions_of_user_and_assistant():
    log = [
        say("user", "Decision: SQLite for now. Write the store."),
        say("assistant", "I'll use argparse instead of click. Writing it."),
    ]
    assert offline_brief(log, cwd="")["decisions"] == [
        "Decision: SQLite for now. (log #1)",
        "I'll use argparse instead of click. (log #2)",
    ]


def test_pending_comes_from_the_latest_todo_list_without_done_tasks():
    log = [
        todo(("Fix error handling", "pending"), ("Write docs", "pending")),
        todo(("Fix error handling", "completed"), ("Write docs", "in_progress")),
        say("assistant", "Error handling is fixed. Now let me write the docs."),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["pending"] == ["Write docs (in_progress)"]
    assert "Continue: Write docs" in brief["next_steps"]


def test_a_failing_test_run_is_pending_and_a_passing_one_verified():
    log = [
        call("Bash", {"command": "pytest -q"}),
        result("Bash", "2 failed, 5 passed in 0.3s"),
        call("Bash", {"command": "ruff check ."}),
        result("Bash", "All checks passed!\nexit code 0"),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["pending"] == [
        "`pytest -q` → 2 failed, 5 passed in 0.3s — its latest run failed (log #2)"
    ]
    assert brief["verified"] == ["`ruff check .` → All checks passed! (log #4)"]


def test_staging_files_verifies_nothing_but_the_commit_that_records_them_does():
    log = [
        call("Bash", {"command": "git add -f build/search.log"}),
        result("Bash", ""),
        call("Bash", {"command": "git add src/a.py && git commit -m 'Search'"}),
        result("Bash", "[main 3f9a2c1] Search\n 1 file changed"),
    ]
    assert offline_brief(log, cwd="")["verified"] == [
        "`git add src/a.py && git commit -m 'Search'` → [main 3f9a2c1] Search (log #4)"
    ]


def test_a_finished_session_says_it_is_finished():
    log = [
        say("user", "Implement the epic and push it"),
        say("assistant", "All done. The epic is fully implemented and pushed."),
    ]
    steps = offline_brief(log, cwd="")["next_steps"]
    assert steps[0] == "The session reports its work finished; wait for the user's next request."
    assert steps[1].startswith("Current state (the last assistant message): “All done.")


def test_a_file_a_shell_command_wrote_is_an_artifact():
    log = [
        call("Bash", {"command": "iconv -t utf-8 a.csv > a.utf8.csv && mv a.utf8.csv b.csv"}),
        result("Bash", ""),
        call("Bash", {"command": "pytest -q > /tmp/out.txt; cp a.csv /tmp/a.csv"}),
        result("Bash", "3 passed in 0.1s"),
        call("Bash", {"command": "sed -i s/x/y/ src/c.py 2>&1 > /dev/null"}),
        result("Bash", "Exit code 2\nsed: can't read src/c.py"),
    ]
    assert offline_brief(log, cwd="/w")["artifacts"] == [
        "workspace: /w",
        "/w/b.csv — written by `iconv`, moved from /w/a.utf8.csv",
    ]


def test_a_log_cut_before_the_answer_to_runs_that_all_succeeded_is_finished():
    log = [
        say("user", "Convert the file to UTF-8 and keep a backup"),
        call("Bash", {"command": "iconv -t utf-8 a.csv > b.csv && mv b.csv a.csv"}),
        result("Bash", ""),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["pending"] == []
    assert brief["next_steps"][0].endswith(
        "the work looks finished; wait for the user's next request."
    )
    assert (
        "The log ends without the agent's answer to the latest request." in brief["uncertainties"]
    )


def test_a_log_cut_after_a_failed_run_is_not_finished():
    log = [
        say("user", "Convert the file to UTF-8 and keep a backup"),
        call("Bash", {"command": "iconv -t utf-8 a.csv > b.csv"}),
        result("Bash", "Exit code 1\niconv: cannot open a.csv"),
    ]
    assert "finished" not in offline_brief(log, cwd="")["next_steps"][0]


def test_an_assistants_kept_choice_is_a_decision_and_a_behaviour_it_states_is_not_verified():
    log = [
        say("user", "Add a word count. Never change the storage format."),
        say(
            "assistant",
            "I kept the storage format: the count is computed when shown, never stored. "
            "It also handles empty notes.",
        ),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["decisions"] == [
        "I kept the storage format: the count is computed when shown, never stored. (log #2)"
    ]
    assert "stated, not verified: It also handles empty notes. (log #2)" in brief["uncertainties"]


def test_a_session_that_goes_on_is_not_finished():
    log = [
        say("user", "Implement the epic and push it"),
        say("assistant", "gqc.6 is done. Now let me look at gqc.7."),
    ]
    assert "finished" not in offline_brief(log, cwd="")["next_steps"][0]


def test_summary_pending_tasks_closed_later_are_not_pending():
    summary = "Summary:\n7. Pending Tasks:\n   - spotter-gqc.6: add tests\n   - gqc.7: launch\n"
    log = [
        say("system", summary, "compaction"),
        call("Bash", {"command": "bd close spotter-gqc.6"}),
        result("Bash", "✓ Closed spotter-gqc.6: tests added"),
        say("assistant", "Working on gqc.7: reading the hooks."),
    ]
    assert offline_brief(log, cwd="")["pending"] == [f"gqc.7: launch — {NOT_DONE_SINCE}"]


def test_a_successor_carries_its_predecessors_goal_and_constraints():
    predecessor = {
        "goal": "Build the weather CLI — latest direction: add caching",
        "constraints": ["Standard library only."],
        "decisions": ["Use argparse."],
    }
    seed = render_brief(validate_brief(predecessor), source_title="Weather")
    log = [
        say("user", seed, "plugin"),
        say("assistant", "Offline agent: received the handoff brief."),
        say("user", "Also print the temperature in Fahrenheit", "relay"),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["goal"] == (
        "Build the weather CLI — latest direction: Also print the temperature in Fahrenheit"
    )
    assert brief["constraints"] == ["Standard library only."]
    assert brief["decisions"] == ["Use argparse."]


def test_a_successor_that_edited_nothing_keeps_its_predecessors_files_and_open_work():
    predecessor = {
        "goal": "Build the weather CLI",
        "artifacts": ["workspace: /w", "/w/weather/cli.py — written, edited ×2"],
        "verified": ["pytest -q — 22 passed"],
        "pending": ["Finish the README examples (pending)"],
        "next_steps": ["Finish the README examples."],
    }
    seed = render_brief(validate_brief(predecessor), source_title="Weather")
    log = [
        say("user", seed, "plugin"),
        say("assistant", "Offline agent: received the handoff brief."),
        say("user", "Please also add a --version flag.", "relay"),
        say("assistant", "Offline agent: received your message."),
    ]
    brief = offline_brief(log, cwd="/w")
    assert brief["artifacts"] == ["workspace: /w", "/w/weather/cli.py — written, edited ×2"]
    assert brief["verified"] == ["pytest -q — 22 passed"]
    assert brief["pending"] == [
        "requested, not answered yet: Please also add a --version flag. (log #3)",
        "Finish the README examples (pending)",
    ]
    assert brief["next_steps"] == [
        "Answer the latest request first: Please also add a --version flag. (log #3)",
        "Finish the README examples.",
    ]


def test_the_next_step_the_last_assistant_message_states_is_a_next_step():
    long_state = "client.py now retries 429 and 5xx answers twice with backoff. " * 6
    log = [
        say("user", "Build the weather CLI with caching and retries"),
        say("assistant", long_state + "Next: finish the README examples and run the CLI once."),
    ]
    brief = offline_brief(log, cwd="")
    assert (
        "As the last assistant message says: Next: finish the README examples and run the CLI "
        "once." in brief["next_steps"]
    )


def test_nothing_is_invented_every_file_and_command_is_in_the_log():
    log = [
        say("user", "Fix the crash, see https://example.com/issue/1 and /etc/hosts"),
        call("Edit", {"file_path": "/w/app.py", "old_string": "a", "new_string": "b"}),
        result("Edit", "The file /w/app.py has been updated successfully."),
    ]
    brief = offline_brief(log, cwd="/w")
    assert brief["artifacts"] == ["workspace: /w", "/w/app.py — edited"]
    text = json.dumps(log)
    assert all(
        item.split(" — ")[0].removeprefix("workspace: ") in text for item in brief["artifacts"]
    )


def test_an_empty_log_still_gives_a_valid_brief():
    brief = offline_brief([], cwd="")
    assert validate_brief(brief) == brief
    assert brief["goal"] == "Continue the work of the previous session."


def test_the_brief_stays_below_the_size_cap():
    text = "Please edit /data/file_{}.py now, never skip tests " + "x" * 2000
    huge = [say("user", text.format(i)) for i in range(400)]
    assert len(json.dumps(offline_brief(huge, cwd="/data"), ensure_ascii=False)) <= 40_000


def test_without_file_edits_the_files_the_assistant_names_are_the_artifacts():
    log = [
        say("user", "Write the client, see https://api.example.com/v1/forecast"),
        say("assistant", "Wrote /w/weather/client.py and /w/tests/test_client.py; /usr/bin/env."),
        say("assistant", "Updated /w/weather/client.py again, built /w/dist/app.js."),
    ]
    assert offline_brief(log, cwd="/w")["artifacts"] == [
        "workspace: /w",
        "/w/weather/client.py — mentioned by the assistant",
        "/w/tests/test_client.py — mentioned by the assistant",
    ]


def test_right_after_a_compaction_the_summary_gives_current_work_and_next_step():
    summary = (
        "Summary:\n8. Current Work:\n   Working on gqc.6, the close button.\n\n"
        "9. Optional Next Step:\n   Add the LiveView tests for gqc.6.\n"
    )
    steps = offline_brief([say("system", summary, "compaction")], cwd="")["next_steps"]
    assert steps == [
        "Add the LiveView tests for gqc.6.",
        "Current state (the compaction summary): Working on gqc.6, the close button.",
    ]


def test_a_rule_or_decision_read_across_a_code_block_is_kept():
    """docs/spec.md, Brief: constraints and decisions are the user's and assistant's
    sentences with a rule or decision word, read with code blocks left out, so words a code
    block separates count as one phrase ("do … not" reads "do not")."""
    log = [
        say("user", "Clean the build. Do```\nmake clean\n```not delete the fixtures."),
        say("assistant", "Going```\npip install ruff\n```with ruff for linting."),
    ]
    brief = offline_brief(log, cwd="")
    assert "Do not delete the fixtures. (log #1)" in brief["constraints"]
    assert "Going with ruff for linting. (log #2)" in brief["decisions"]


def test_a_predecessors_repeated_decisions_leave_room_for_the_logs():
    """docs/spec.md, Brief: decisions are the predecessor's, then the log's stated ones, up
    to the brief's twelve; a decision the predecessor's list repeats takes no place."""
    repeated = [f"Use tool {n}." for n in range(11)] + ["Use tool 0."]
    predecessor = {"goal": "Build the weather CLI", "decisions": repeated}
    seed = render_brief(validate_brief(predecessor), source_title="Weather")
    log = [
        say("user", seed, "plugin"),
        say("assistant", "I'll use httpx instead of requests. Writing it."),
    ]
    decisions = offline_brief(log, cwd="")["decisions"]
    assert decisions == [*repeated[:11], "I'll use httpx instead of requests. (log #2)"]


SUMMARY_WITH_EPIC = (
    "Summary:\n7. Pending Tasks:\n   - E-1 (EPIC): close after all subtasks are done\n"
)


@pytest.mark.parametrize(
    "signal",
    [
        [call("Bash", {"command": "bd close E-1"}), result("Bash", "✓ Closed E-1")],
        [todo(("Close epic E-1", "completed"))],
        [say("assistant", "Epic E-1 complete. Next I will wait for review.")],
    ],
    ids=["close-command-output", "todo-completed", "final-message"],
)
def test_each_closing_signal_closes_a_summary_task_on_its_own(signal):
    """Closure does not hang on one phrasing or one kind of signal."""
    log = [say("system", SUMMARY_WITH_EPIC, "compaction"), *signal]
    assert offline_brief(log, cwd="")["pending"] == []


def test_a_task_closed_under_another_id_is_still_pending():
    log = [
        say("system", SUMMARY_WITH_EPIC, "compaction"),
        call("Bash", {"command": "bd close E-12"}),
        result("Bash", "✓ Closed E-12"),
    ]
    assert offline_brief(log, cwd="")["pending"] == [
        f"E-1 (EPIC): close after all subtasks are done — {NOT_DONE_SINCE}"
    ]


@pytest.mark.parametrize(
    "final",
    ["All done. Epic E-1 is complete.", "Epic E-1 complete. All subtasks done and pushed."],
)
def test_a_finished_session_has_nothing_pending_whatever_the_phrasing(final):
    log = [
        say("user", "Implement epic E-1"),
        todo(("Write the docs", "in_progress")),
        say("assistant", final),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["pending"] == []
    assert brief["next_steps"][0] == (
        "The session reports its work finished; wait for the user's next request."
    )
    assert brief["uncertainties"][0] == (
        "left open in the log although the final message reports the work done: "
        "Write the docs (in_progress)"
    )


def test_work_said_not_done_yet_is_not_finished():
    log = [say("user", "Write the docs"), say("assistant", "The docs are not done yet.")]
    brief = offline_brief(log, cwd="")
    assert brief["pending"] == ["The docs are not done yet. (log #2)"]


def test_a_clipped_item_ends_at_a_sentence_or_a_word():
    assert clip("One two three four. Five six seven eight", 30) == "One two three four. …"
    assert clip("alpha beta gamma delta epsilon", 20) == "alpha beta gamma…"


def test_open_work_is_what_each_of_the_last_two_exchanges_concluded():
    """A not-done statement an exchange later settled is not pending; one that leans on its
    sentence ("It is not committed yet") keeps that sentence."""
    log = [
        say("user", "Add a --days option"),
        say("assistant", "The range is not checked yet. Checking it now."),
        say("assistant", "--days now accepts 1 to 7."),
        say("user", "Now the prefix match"),
        say("assistant", "Prefix matching is in stations.py. It is not committed yet."),
    ]
    brief = offline_brief(log, cwd="")
    assert brief["pending"] == [
        "Prefix matching is in stations.py. It is not committed yet. (log #5)"
    ]
    assert brief["next_steps"][0] == (
        "Finish what the last assistant message leaves open: Prefix matching is in "
        "stations.py. It is not committed yet. (log #5)"
    )


def test_the_reading_a_plan_update_explains_is_a_decision():
    note = "I’m treating “compact to 90” as the config's `compaction.threshold` of 0.9."
    log = [
        say("user", "context compact to 90 in env var"),
        call(
            "update_plan", {"plan": [{"step": "Set it", "status": "pending"}], "explanation": note}
        ),
    ]
    assert offline_brief(log, cwd="")["decisions"] == [f"{note} (log #2)"]


def test_a_rule_is_listed_once_under_constraints_not_again_under_decisions():
    """docs/spec.md, Brief: a later request's rule is a constraint; decisions keep the
    choices (the same rule text is not listed in both sections)."""
    log = [
        say("user", "Write the CLI."),
        say("assistant", "Done. Going with argparse for the flags."),
        say("user", "Don't add a setup.py. Keep the tests."),
    ]
    brief = offline_brief(log, cwd="")
    assert "Don't add a setup.py. (log #3)" in brief["constraints"]
    assert not any("setup.py" in item for item in brief["decisions"])
    assert "Going with argparse for the flags. (log #2)" in brief["decisions"]


def test_a_rule_carried_from_the_predecessor_is_not_repeated_as_a_decision():
    predecessor = {
        "goal": "Build the weather CLI",
        "constraints": ["Never commit to main. (log #4)"],
        "decisions": ["Never commit to main. (log #4)", "Use argparse. (log #2)"],
    }
    seed = render_brief(validate_brief(predecessor), source_title="Weather")
    log = [say("user", seed, "plugin"), say("user", "Go on.", "relay")]
    brief = offline_brief(log, cwd="")
    assert brief["constraints"] == ["Never commit to main. (earlier log #4)"]
    assert brief["decisions"] == ["Use argparse. (earlier log #2)"]


def test_files_a_compaction_summary_marks_unchanged_or_read_only_are_no_artifacts():
    summary = (
        "3. Files and Code Sections:\n"
        "   - `src/a.py` (edited): the parser\n"
        "   - `src/models.py` (READ ONLY): read for its fields\n"
        "   - `src/cli.py` (UNCHANGED — inspected only)\n"
        "   - `src/b.py` — not modified, only read\n"
    )
    log = [say("system", summary, "compaction"), say("assistant", "Next: the CLI.")]
    assert offline_brief(log, cwd="/w")["artifacts"] == [
        "workspace: /w",
        "/w/src/a.py — (edited): the parser (before the last compaction)",
    ]


def test_failed_attempts_are_uncertainties_never_decisions():
    summary = (
        "4. Errors and fixes:\n"
        "   Attempted fixes that all failed:\n"
        "   - Falling back to `dateutil` with `fuzzy=True` — still read 03/04 as March 4\n"
        "   - Setting `dayfirst=True` globally instead of per export\n"
        "   - Switched to pandas: rejected by the user\n"
        "5. Problem Solving:\n"
        "   Chose to parse day first only for the EU exports.\n"
    )
    log = [
        say("system", summary, "compaction"),
        say("assistant", "Going with a lookup table instead of regexes did not work either."),
        say("assistant", "Decision: we'll use the export's locale."),
    ]
    brief = offline_brief(log, cwd="/w")
    assert [uncited(item) for item in brief["decisions"]] == [
        "Chose to parse day first only for the EU exports.",
        "Decision: we'll use the export's locale.",
    ]
    assert [i for i in brief["uncertainties"] if i.startswith("tried")] == [
        "tried, did not work: Falling back to `dateutil` with `fuzzy=True` — still read 03/04 as "
        "March 4 (compaction summary)",
        "tried, did not work: Setting `dayfirst=True` globally instead of per export "
        "(compaction summary)",
        "tried, did not work: Switched to pandas: rejected by the user (compaction summary)",
    ]


def test_a_summary_task_is_closed_by_what_the_log_did_after_it_and_only_by_that():
    summary = (
        "7. Pending Tasks:\n"
        "   - Add the --since option to src/ledger/cli.py\n"
        "   - Run the full test suite (pytest -q)\n"
        "   - Commit the fix\n"
        "   - Update CHANGELOG.md\n"
        "   - Make mypy pass on src\n"
    )
    edit = {"file_path": "/w/src/ledger/cli.py", "old_string": "a", "new_string": "b"}
    log = [
        say("system", summary, "compaction"),
        call("Edit", edit),
        result("Edit", "The file /w/src/ledger/cli.py has been updated successfully."),
        call("Edit", {"file_path": "/w/docs/CHANGELOG.md.bak"}),
        result("Edit", "The file has been updated successfully."),
        call("Bash", {"command": "pytest -q"}),
        result("Bash", "41 passed in 1.2s"),
        call("Bash", {"command": "mypy src"}),
        result("Bash", "Exit code 1\nsrc/a.py:3: error: x\nFound 1 error in 1 file"),
        call("Bash", {"command": "git commit -m 'Dates'"}),
        result("Bash", "[main 9c8d7e6] Dates"),
        say("assistant", "Next: the changelog."),
    ]
    assert offline_brief(log, cwd="/w")["pending"] == [
        "`mypy src` → Found 1 error in 1 file: src/a.py:3: error: x — its latest run failed "
        "(log #9)",
        "Update CHANGELOG.md — pending in the compaction summary; nothing later in the log did it",
        "Make mypy pass on src — pending in the compaction summary; nothing later in the log did "
        "it",
    ]


def test_a_follow_up_filed_at_the_end_is_pending_with_its_id_even_when_the_work_is_done():
    log = [
        say("user", "Fix the date parser"),
        call("Bash", {"command": 'bd create "Dates before 1970 parse as None" -t bug'}),
        result("Bash", "✓ Created issue: ledger-5"),
        say(
            "assistant", "All done.\n\nDiscovered & filed: ledger-5 (dates before 1970) for later."
        ),
    ]
    brief = offline_brief(log, cwd="/w")
    assert brief["pending"] == [
        "ledger-5 (dates before 1970) for later — a follow-up filed at the end, not done in this "
        "log (log #4)"
    ]
    assert brief["next_steps"][0].startswith("The session reports its work finished")


def removed_then_committed(commit: str) -> list[dict[str, str]]:
    return [
        say("user", "Drop the dev config and the old migration, and commit it all"),
        call("Bash", {"command": "rm config/dev.toml migrations/0003_old.py"}),
        result("Bash", ""),
        call("Bash", {"command": commit}),
        result("Bash", "[main 4e5f6a7] Drop old files\n 2 files changed"),
        say("assistant", "Done: everything is committed in 4e5f6a7."),
    ]


def test_a_deletion_no_add_staged_before_the_commit_stays_uncommitted_and_open():
    log = removed_then_committed("git add -A migrations && git commit -m 'Drop old files'")
    brief = offline_brief(log, cwd="/w")

    open_item = (
        "Commit the deletion of /w/config/dev.toml (log #3), not committed (no `git add` "
        "staged the deletion before the later commit)"
    )
    assert brief["pending"] == [open_item]
    assert brief["next_steps"][0] == open_item
    assert brief["artifacts"][1].startswith("/w/config/dev.toml — deleted (log #3), not committed")
    assert not any("0003_old.py" in item for item in brief["artifacts"])


@pytest.mark.parametrize(
    "commit",
    [
        "git add -A && git commit -m 'Drop old files'",
        "git add -A config migrations && git commit -m 'Drop old files'",
        "git commit -a -m 'Drop old files'",
    ],
)
def test_a_deletion_staged_before_the_commit_is_committed_and_the_work_finished(commit: str):
    brief = offline_brief(removed_then_committed(commit), cwd="/w")

    assert brief["pending"] == []
    assert brief["next_steps"][0].startswith("The session reports its work finished")
    assert brief["artifacts"] == ["workspace: /w"]


def compacted(entry: dict[str, str]) -> dict[str, object]:
    return {**entry, "compacted": True}


def test_files_committed_before_a_compaction_read_committed_and_its_runs_verify_nothing():
    summary = "Summary:\n1. Primary Request and Intent:\n   Write the CSV export.\n"
    log = [
        *map(
            compacted,
            [
                call("Write", {"file_path": "/w/export.py", "content": "x"}),
                result("Write", "File created successfully at: /w/export.py"),
                call("Write", {"file_path": "/w/notes.md", "content": "x"}),
                result("Write", "File created successfully at: /w/notes.md"),
                call("Bash", {"command": "pytest -q"}),
                result("Bash", "4 passed in 0.12s"),
                call("Bash", {"command": "git add notes.md && git commit -m 'Notes'"}),
                {**result("Bash", "ruff....Failed\n[main 1a2b3c4] Notes"), "tool_error": True},
                call("Bash", {"command": "git add export.py && git commit -m 'Export'"}),
                result("Bash", "[main 5b21e07] Export\n 1 file changed"),
            ],
        ),
        say("system", summary, "compaction"),
        say("assistant", "The export is written."),
    ]
    brief = offline_brief(log, cwd="/w")

    assert brief["artifacts"][1:] == ["/w/export.py — written, committed", "/w/notes.md — written"]
    assert brief["verified"] == []


def checked_then_edited(check: str, *after: dict[str, str]) -> dict[str, Any]:
    log = [
        say("user", "Make the CLI tests pass"),
        call("Bash", {"command": check}),
        result("Bash", "15 passed in 0.37s"),
        call("Edit", {"file_path": "/w/tests/test_cli.py", "old_string": "a", "new_string": "b"}),
        result("Edit", "The file /w/tests/test_cli.py has been updated."),
        call("Write", {"file_path": "/w/README.md", "content": "x"}),
        result("Write", "The file /w/README.md has been updated."),
        *after,
        say("assistant", "All green."),
    ]
    return offline_brief(log, cwd="/w")


def test_a_check_followed_by_edits_to_files_it_covers_says_so():
    brief = checked_then_edited("pytest -q")

    assert brief["verified"] == [
        "`pytest -q` → 15 passed in 0.37s (log #3), before later edits to tests/test_cli.py "
        "(log #5) and README.md (log #7)"
    ]


def test_edits_outside_a_checks_paths_or_checked_again_after_leave_it_as_it_is():
    assert checked_then_edited("pytest -q src")["verified"] == [
        "`pytest -q src` → 15 passed in 0.37s (log #3)"
    ]
    assert checked_then_edited("pytest tests/test_cli.py")["verified"][0].endswith(
        "(log #3), before later edits to tests/test_cli.py (log #5)"
    )
    rerun = checked_then_edited(
        "pytest -q", call("Bash", {"command": "pytest -q"}), result("Bash", "15 passed in 0.4s")
    )
    assert rerun["verified"] == ["`pytest -q` → 15 passed in 0.4s (log #9)"]
    broader = checked_then_edited(
        "pytest tests/test_cli.py", call("Bash", {"command": "pytest"}), result("Bash", "16 passed")
    )
    assert broader["verified"] == [
        "`pytest tests/test_cli.py` → 15 passed in 0.37s (log #3)",
        "`pytest` → 16 passed (log #9)",
    ]


def option_claimed(*shown: dict[str, str]) -> list[str]:
    patch = "*** Begin Patch\n*** Update File: cli.py\n+    add('--json', action='store_true')\n"
    log = [
        say("user", "Add a --json flag"),
        call("apply_patch", patch + "*** End Patch\n"),
        result("apply_patch", "Success. Updated the following files:\nM cli.py"),
        *shown,
        say("assistant", "--json prints the forecast as a JSON list; the flag is documented."),
    ]
    return offline_brief(log, cwd="/w")["uncertainties"]


def test_what_an_option_does_stated_with_nothing_running_or_testing_it_is_only_claimed():
    assert option_claimed()[0] == (
        "claimed, not shown in the log: --json prints the forecast as a JSON list (log #4)"
    )


def test_an_option_a_test_names_or_a_command_ran_is_not_a_mere_claim():
    test = {"file_path": "/w/tests/test_cli.py", "content": "main(['Oslo', '--json'])"}
    tested = [call("Write", test), result("Write", "File created successfully")]
    ran = [call("Bash", {"command": "skycast Oslo --json"}), result("Bash", '[{"day": 1}]')]
    for shown in (tested, ran):
        assert not any(item.startswith("claimed") for item in option_claimed(*shown))
