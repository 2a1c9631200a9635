"""handoff.digest.fold: the log's structure read back (docs/spec.md, Brief)."""

from __future__ import annotations

import json
from typing import Any

from handoff.digest import fold as d


def call(tool: str, args: object) -> dict[str, str]:
    content = args if isinstance(args, str) else json.dumps(args)
    return {"role": "assistant", "source_kind": "assistant", "content": content, "tool_name": tool}


def result(tool: str, content: str) -> dict[str, str]:
    return {"role": "tool", "source_kind": "tool", "content": content, "tool_name": tool}


def say(role: str, content: str, kind: str = "") -> dict[str, str]:
    return {"role": role, "source_kind": kind or role, "content": content, "tool_name": ""}


PATCH = """*** Begin Patch
*** Update File: src/app.ts
@@
-a
+b
*** Add File: src/new.ts
+x
*** End Patch"""


def test_files_written_or_edited_are_ranked_by_last_touch_with_what_was_done():
    log = [
        call("Write", {"file_path": "/w/a.py", "content": "x"}),
        result("Write", "File created successfully at: /w/a.py"),
        call("Edit", {"file_path": "/w/b.py", "old_string": "a", "new_string": "b"}),
        result("Edit", "The file /w/b.py has been updated successfully."),
        call("MultiEdit", {"file_path": "/w/a.py", "edits": [{}, {}]}),
        result("MultiEdit", "Applied 2 edits to /w/a.py"),
    ]
    files = d.digest(log).ranked_files()
    assert [(f.path, f.actions) for f in files] == [
        ("/w/a.py", {"written": 1, "edited (2 changes)": 1}),
        ("/w/b.py", {"edited": 1}),
    ]


def test_an_edit_whose_result_is_an_error_changed_nothing():
    log = [
        call("Edit", {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}),
        result("Edit", "<tool_use_error>File has not been read yet.</tool_use_error>"),
    ]
    digest = d.digest(log)
    assert (digest.files, digest.failed_edits) == ({}, 1)


def test_apply_patch_files_are_made_absolute_against_the_working_directory():
    log = [call("apply_patch", PATCH), result("apply_patch", '{"output":"Success."}')]
    files = d.digest(log, cwd="/repo").ranked_files()
    assert {(f.path, *f.actions) for f in files} == {
        ("/repo/src/app.ts", "patched"),
        ("/repo/src/new.ts", "created"),
    }


def test_a_shell_apply_patch_counts_as_an_edit():
    log = [call("shell", {"command": ["apply_patch", PATCH]}), result("shell", "Done!")]
    assert [f.path for f in d.digest(log, cwd="/repo").ranked_files()] == [
        "/repo/src/app.ts",
        "/repo/src/new.ts",
    ]


def test_build_and_dependency_paths_are_never_artifacts():
    log = [
        call("Write", {"file_path": "/w/_build/dev/lib/app.beam", "content": ""}),
        call("Write", {"file_path": "/w/node_modules/x/style.css", "content": ""}),
    ]
    assert d.digest(log).files == {}


def test_the_latest_todo_list_wins_and_done_tasks_are_remembered():
    log = [
        call("TodoWrite", {"todos": [{"content": "Fix error handling", "status": "completed"}]}),
        call("update_plan", {"plan": [{"step": "Write docs", "status": "in_progress"}]}),
    ]
    digest = d.digest(log)
    assert digest.todos == [d.Todo("Write docs", "in_progress")]
    assert digest.done_tasks == ["Fix error handling"]


def test_commands_get_their_outcome_and_reads_are_left_out():
    log = [
        call("Bash", {"command": "mix test 2>&1"}),
        call("Bash", {"command": "git status"}),
        result("Bash", "Finished in 3.0 seconds\n14 doctests, 76 tests, 0 failures"),
        result("Bash", "On branch main\nnothing to commit"),
        call("Bash", {"command": "pytest -q"}),
        result("Bash", "1 failed, 3 passed in 0.2s"),
    ]
    assert [(c.text, c.outcome, c.ok) for c in d.digest(log).runs] == [
        ("mix test 2>&1", "14 doctests, 76 tests, 0 failures", True),
        ("pytest -q", "1 failed, 3 passed in 0.2s", False),
    ]


def test_commits_and_pushes_are_outcomes():
    log = [
        call("Bash", {"command": 'git commit -m "feat: x"'}),
        result("Bash", "[main 05fd186] feat: x\n 2 files changed"),
        call("Bash", {"command": "git push"}),
        result("Bash", "To github.com:o/r.git\n   bb53fb4..05fd186  main -> main"),
    ]
    outcomes = [c.outcome for c in d.digest(log).runs]
    assert outcomes == ["[main 05fd186] feat: x", "bb53fb4..05fd186 main -> main"]


def test_a_codex_command_polled_with_write_stdin_gets_its_exit_code():
    log = [
        call("exec_command", {"cmd": "npm run build"}),
        result("exec_command", "Process running with session ID 7\nOutput:\n"),
        call("write_stdin", {"session_id": 7, "chars": ""}),
        result("write_stdin", "Process exited with code 0\nOutput:\nbuilt"),
    ]
    assert [(c.text, c.outcome, c.ok) for c in d.digest(log).runs] == [
        ("npm run build", "exit code 0", True)
    ]


def test_requests_are_typed_or_relayed_user_messages():
    log = [
        say("user", "Build it", "user"),
        say("user", "<task-notification>done</task-notification>", "system"),
        say("user", "And test it", "relay"),
    ]
    assert d.digest(log).requests == ["Build it", "And test it"]


def test_a_claude_code_compaction_summary_is_parsed_by_section():
    summary = (
        "Analysis:\n1. Noise: not this one\n\nSummary:\n1. Primary Request and Intent:\n"
        "   Implement the epic.\n\n7. Pending Tasks:\n   - gqc.7: launch\n\n"
        "9. Optional Next Step:\n   Finish gqc.7.\n"
    )
    sections = d.summary_sections(summary)
    assert sections == {
        "primary request and intent": "Implement the epic.",
        "pending tasks": "- gqc.7: launch",
        "optional next step": "Finish gqc.7.",
    }


def test_a_predecessors_brief_is_read_back():
    brief = (
        "# Handoff brief from “A”\n\n**Goal:** Port the parser\n\n## Constraints\n"
        "- Standard library only\n- Never push\n"
    )
    assert d.parse_predecessor(brief) == {
        "goal": "Port the parser",
        "constraints": ["Standard library only", "Never push"],
    }


def test_task_identifiers_reported_closed_are_found():
    assert d.closed_ids("✓ Closed spotter-gqc.6: done") == {"gqc.6"}
    assert d.closed_ids("gqc.7 done and pushed") == {"gqc.7"}
    assert d.task_ids("**spotter-gqc.6** (in_progress)") == {"gqc.6"}


def run(text: str, ok: bool) -> d.Command:
    return d.Command(text, "", ok, 0)


def test_a_later_run_of_the_same_head_on_the_same_target_or_more_covers_a_failure():
    """Same command head, same file or test path, or a superset."""
    assert d.covers(run("git push --set-upstream origin b 2>&1", True), run("git push 2>&1", False))
    assert d.covers(run("git add -f build/x.log", True), run("git add build/x.log", False))
    assert d.covers(run(".venv/bin/pytest -q", True), run("pytest tests/test_a.py", False))
    assert d.covers(run("python -m pytest tests/", True), run("pytest tests/test_a.py", False))


def test_a_run_on_another_target_or_with_another_head_does_not_cover_a_failure():
    assert not d.covers(run("pytest tests/test_b.py", True), run("pytest tests/test_a.py", False))
    assert not d.covers(run("pytest tests/test_a.py", True), run("pytest", False))
    assert not d.covers(run("git commit -m x", True), run("git push", False))


def test_a_claude_code_bash_result_without_an_exit_code_succeeded():
    log = [call("Bash", {"command": "git add -f x.log"}), result("Bash", "")]
    assert [(c.outcome, c.ok) for c in d.digest(log).runs] == [("exit code 0", True)]


def test_files_a_successful_commit_names_are_committed_and_a_failed_one_names_none():
    committed = [
        call("Bash", {"command": "git add src/a.py && git commit -m x"}),
        result("Bash", "[main 1a2b3c4] x\n 1 file changed"),
    ]
    failed = [
        call("Bash", {"command": "git add src/b.py && git commit -m x"}),
        result("Bash", "Exit code 1\nhook failed"),
    ]
    assert [(f.path, f.actions) for f in d.digest(committed, cwd="/w").ranked_files()] == [
        ("/w/src/a.py", {"committed": 1})
    ]
    assert d.digest(failed, cwd="/w").files == {}


def test_the_users_answers_to_the_agents_questions_are_kept():
    answered = 'User has answered your questions: "Which db?"="SQLite", "Push?"="never". Go on.'
    log = [call("AskUserQuestion", {"questions": []}), result("AskUserQuestion", answered)]
    assert d.digest(log).answers == ["Which db? → SQLite", "Push? → never"]


def test_a_task_is_closed_only_by_a_line_naming_it():
    assert d.closes("✓ Closed E-1: note sharing", "E-1")
    assert d.closes("Epic E-1 complete. All subtasks done.", "E-1")
    assert not d.closes("✓ Closed E-12: import", "E-1")
    assert not d.closes("✓ Closed E-2: import", "E-1")


def test_a_later_command_lines_segments_of_one_head_cover_a_failure_together():
    refused = run("git add a/b.py c/d.py data/x.toml", False)
    assert d.covers(
        run("git add -f data/x.toml && git add a/b.py c/d.py && git commit", True), refused
    )
    assert not d.covers(run("git add a/b.py c/d.py && git commit -m x", True), refused)


def test_a_program_without_subcommands_keeps_its_targets():
    assert d.intent("mypy tidechart") == ("mypy", frozenset({"tidechart"}))
    assert not d.covers(run("mypy tidechart/cli.py", True), run("mypy tidechart", False))


def test_a_failed_commands_outcome_names_its_error_line():
    output = "Exit code 1\ntidechart/plot.py:41: error: Argument 1 to render\nFound 1 error"
    assert d.outcome_of(output) == (
        "Found 1 error: tidechart/plot.py:41: error: Argument 1 to render",
        False,
    )
    assert d.outcome_of("Exit code 2\nerror: no such option: --foo") == (
        "exit code 2: error: no such option: --foo",
        False,
    )


def bash(command: str, output: str, error: bool | None = None) -> list[dict[str, Any]]:
    return [call("Bash", {"command": command}), {**result("Bash", output), "tool_error": error}]


def numbered(*log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of ``log``'s parts in order, each with its log entry number."""
    return [{**entry, "seq": n} for n, entry in enumerate(sum(log, []), 1)]


def runs_of(*log: list[dict[str, Any]]) -> list[tuple[str, str, bool | None]]:
    return [(c.text, c.outcome, c.ok) for c in d.digest(numbered(*log)).latest_runs.values()]


def test_a_result_the_runtime_flags_as_failed_failed_whatever_it_prints():
    hook = "ruff.....Failed\n- hook id: ruff\nsrc/a.py:3:1: F401 `os` imported but unused"
    assert runs_of(
        bash("git commit -m 'x'", hook, error=True),
        bash("pytest -q", "5 passed in 0.1s", error=True),
    ) == [
        ("git commit -m 'x'", "src/a.py:3:1: F401 `os` imported but unused", False),
        ("pytest -q", "5 passed in 0.1s — failed (the runtime reported an error)", False),
    ]
    assert d.outcome_of("Permission denied", error=True) == (d.REPORTED_FAILED, False)


def test_findings_of_linters_and_type_checkers_are_failures_and_none_is_a_success():
    assert d.outcome_of("a.py:1:1: F841 x\nFound 1 error.")[1] is False
    assert d.outcome_of("lib/x.ex:3 found 2 issues")[1] is False
    assert d.outcome_of("✖ 3 problems (3 errors, 0 warnings)")[1] is False
    assert d.outcome_of("All checks passed!") == ("All checks passed!", True)
    assert d.outcome_of("Success: no issues found in 4 source files")[1] is True


def test_a_piped_check_is_told_only_by_its_printed_text():
    assert runs_of(
        bash("ruff check src | tail -3", "a.py:1:1: F841 x\nFound 1 error.", error=False),
        bash("pytest -q 2>&1 | tail -1", "6 passed in 0.31s", error=False),
        bash("make docs 2>&1 | tail -1", "Exit code 0\nWriting docs/index.html", error=False),
    ) == [
        ("ruff check src | tail -3", "Found 1 error: a.py:1:1: F841 x", False),
        ("pytest -q 2>&1 | tail -1", "6 passed in 0.31s", True),
        ("make docs 2>&1 | tail -1", d.NOT_SHOWN, None),
    ]
    assert not d.piped("pytest -q || true") and not d.piped("git log | head -3")


def test_a_run_whose_outcome_is_not_shown_closes_no_failure():
    log = [
        bash("pytest -q", "Exit code 1\n1 failed, 5 passed", error=True),
        bash("pytest -q | tail -1", "see the log file", error=False),
    ]
    assert [c.text for c in d.digest(numbered(*log)).failures] == ["pytest -q"]


def test_a_linters_bare_folder_is_its_target_a_pass_on_another_closes_nothing():
    assert d.intent("ruff check src") == ("ruff check", frozenset({"src"}))
    assert d.intent("git push origin main") == ("git push", frozenset())
    log = [
        bash("ruff check src", "Exit code 1\nFound 1 error.", error=True),
        bash("ruff check tests", "All checks passed!", error=False),
    ]
    assert [c.text for c in d.digest(numbered(*log)).failures] == ["ruff check src"]


def test_an_edit_the_runtime_flags_as_failed_changed_nothing():
    log: list[dict[str, Any]] = [
        call("Edit", {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}),
        {**result("Edit", "String to replace not found in file."), "tool_error": True},
    ]
    digest = d.digest(log)
    assert (digest.files, digest.failed_edits) == ({}, 1)


def files_of(*log: list[dict[str, Any]]) -> list[tuple[str, dict[str, int]]]:
    return [(f.path, f.actions) for f in d.digest(numbered(*log), cwd="/w").ranked_files()]


def write(path: str) -> list[dict[str, Any]]:
    return [call("Write", {"file_path": path, "content": "x"}), result("Write", "File created")]


def test_a_moved_file_stands_under_its_new_path_and_a_deleted_one_not_at_all():
    assert files_of(
        write("/w/run.py"),
        write("/w/old.py"),
        bash("mv run.py scripts/", ""),
        bash("git rm -q old.py", ""),
    ) == [("/w/scripts/run.py", {"written": 1, "moved from /w/run.py": 1})]


def test_a_file_moved_back_is_where_it_was_and_a_failed_move_moved_nothing():
    assert files_of(
        write("/w/docs/a.md"),
        bash("mv docs/a.md docs/old/a.md", ""),
        bash("mv docs/old/a.md docs/a.md", ""),
        bash("mv docs/a.md docs/b.md", "mv: cannot move: Permission denied", error=True),
    ) == [("/w/docs/a.md", {"written": 1})]


def test_a_commit_takes_what_was_staged_before_it_and_an_add_that_staged_nothing_stages_nothing():
    assert files_of(
        write("/w/a.py"),
        bash("git add a.py", ""),
        bash("git add README.md && git diff --cached --name-only -- README.md", ""),
        write("/w/docs/b.md"),
        bash("git add -A docs && git commit -m 'x'", "[main 4e5f6a7] x"),
    ) == [
        ("/w/a.py", {"written": 1, "committed": 1}),
        ("/w/docs/b.md", {"written": 1, "committed": 1}),
    ]


def test_commit_all_takes_the_edited_files_and_an_edit_after_a_commit_is_not_committed():
    def edit(path: str) -> list[dict[str, Any]]:
        return [call("Edit", {"file_path": path}), result("Edit", "The file has been updated")]

    assert files_of(
        edit("/w/c.py"),
        edit("/w/d.py"),
        write("/w/new.py"),
        bash("git commit -am 'x'", "[main 1a2b3c4] x"),
        edit("/w/c.py"),
    ) == [
        ("/w/c.py", {"edited": 2}),
        ("/w/d.py", {"edited": 1, "committed": 1}),
        ("/w/new.py", {"written": 1}),
    ]
