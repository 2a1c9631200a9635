"""The benchmark runner's ``--both`` and the Chromium benchmark's long log: no
benchmark is timed here, only what the runner starts and what the import gives."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dj_database_url
import pytest
from django.db import OperationalError, connections
from django.db.utils import load_backend
from shared_files import ROOT

from bench import __main__ as runner
from bench import follower_pages, hook_stop
from bench.chromium_tabs import LONG_LOG, import_long_log
from bench.synthetic_logs import write_claude_log, write_codex_rollout
from host.importers import import_report, import_transcript


def test_both_runs_the_benchmark_on_each_configuration_in_a_process_of_its_own(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/elsewhere")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/1")
    monkeypatch.setenv("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sh_other")
    monkeypatch.delenv("BENCH_REDIS_URL", raising=False)
    runs: list[tuple[list[str], dict[str, str]]] = []

    def run(command: list[str], env: dict[str, str], cwd: Path) -> Any:
        print("(the table)")
        runs.append((command, env))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(runner.subprocess, "run", run)
    runner.run_both("pages")

    assert [command for command, _ in runs] == [[sys.executable, "-m", "bench", "pages"]] * 2
    (_, embedded), (_, real) = runs
    assert "DATABASE_URL" not in embedded and "REDIS_URL" not in embedded
    assert real["DATABASE_URL"] == "postgres://postgres@127.0.0.1:5432/sh_other"
    assert real["REDIS_URL"] == "redis://127.0.0.1:6379/7"
    assert capsys.readouterr().out.splitlines() == [
        "== pages on SQLite file + in-memory channel layer",
        "(the table)",
        "== pages on PostgreSQL + Redis"
        " (postgres://postgres@127.0.0.1:5432/sh_other, redis://127.0.0.1:6379/7)",
        "(the table)",
    ]


def test_browsers_many_reaches_the_page_mode_of_each_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BENCH_PAGE_BROWSERS", raising=False)
    monkeypatch.setattr(sys, "argv", ["bench", "pages", "--browsers", "many", "--both"])
    layouts: list[str | None] = []

    def run(command: list[str], env: dict[str, str], cwd: Path) -> Any:
        layouts.append(env.get("BENCH_PAGE_BROWSERS"))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(runner.subprocess, "run", run)
    runner.main()
    assert layouts == ["many", "many"]


def test_concurrency_gives_the_page_mode_a_server_per_bound_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCH_PAGE_CONCURRENCY", "")  # restored after: main() sets it
    monkeypatch.setattr(sys, "argv", ["bench", "pages", "--concurrency", "4,0", "--both"])
    bounds: list[str | None] = []

    def run(command: list[str], env: dict[str, str], cwd: Path) -> Any:
        bounds.append(env.get("BENCH_PAGE_CONCURRENCY"))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(runner.subprocess, "run", run)
    runner.main()

    assert bounds == ["4,0", "4,0"]
    assert follower_pages.servers() == [
        ("limit 4", {"DJANGO_HTTP_CONCURRENCY": "4"}),
        ("no limit", {"DJANGO_HTTP_CONCURRENCY": "0"}),
    ]
    monkeypatch.setenv("BENCH_PAGE_CONCURRENCY", "four")
    with pytest.raises(SystemExit, match="whole numbers"):
        follower_pages.servers()


def test_browsers_refuses_a_layout_it_does_not_know(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["bench", "pages", "--browsers", "few"])
    with pytest.raises(SystemExit):
        runner.main()
    assert "invalid choice: 'few'" in capsys.readouterr().err


def test_both_runs_the_second_configuration_when_the_first_fails_and_says_which_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    returned = iter([1, 0])
    monkeypatch.setattr(
        runner.subprocess,
        "run",
        lambda command, **_: subprocess.CompletedProcess(command, next(returned)),
    )
    with pytest.raises(SystemExit, match="failed on: SQLite file \\+ in-memory channel layer$"):
        runner.run_both("chromium")
    assert next(returned, None) is None


@pytest.fixture
def missing_database(django_db_blocker: Any) -> Iterator[Any]:
    """A connection to a database of the benchmark's PostgreSQL server that does not exist
    (dropped afterwards); skips when no server answers there."""
    variable, default = runner.CONFIGURATIONS["PostgreSQL + Redis"]["DATABASE_URL"]
    url = os.environ.get(variable, default)
    settings = connections.configure_settings({"default": dj_database_url.parse(url)})["default"]
    settings["NAME"] = f"sh_bench_missing_{uuid.uuid4().hex[:8]}"
    connection = load_backend(settings["ENGINE"]).DatabaseWrapper(settings, alias="bench")
    with django_db_blocker.unblock():
        try:
            with connection._nodb_cursor() as cursor:
                cursor.execute("SELECT 1")
        except OperationalError as error:
            pytest.skip(f"no PostgreSQL server at {url}: {error}")
        yield connection
        connection.close()
        with connection._nodb_cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(settings['NAME'])}")


def test_the_benchmark_creates_its_postgresql_database_when_missing(missing_database: Any) -> None:
    with pytest.raises(OperationalError, match="does not exist"):
        missing_database.ensure_connection()

    assert runner.create_database(missing_database) is True
    with missing_database.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        assert cursor.fetchone() == (missing_database.settings_dict["NAME"],)
    assert runner.create_database(missing_database) is False


def test_an_unknown_benchmark_with_both_gets_the_usage_and_runs_nothing() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "bench", "soak", "--both"], cwd=ROOT, capture_output=True, text=True
    )
    assert ran.returncode == 2
    assert ran.stderr.startswith("usage: python -m bench ")
    assert "--both needs one of: follower, pages, chromium, handoff, briefs" in ran.stderr
    assert ran.stdout == ""


@pytest.mark.django_db
def test_the_long_log_is_imported_again_for_the_same_owner_with_its_whole_timeline(
    django_user_model: Any, tmp_path: Path
) -> None:
    if not LONG_LOG.is_file():
        pytest.skip(f"shared transcripts not found ({LONG_LOG})")
    owner = django_user_model.objects.create_user("ada")
    first, second = (import_long_log(owner, tmp_path) for _ in range(2))
    assert first.pk != second.pk
    assert [import_report(s)["messages"] for s in (first, second)] == [462, 462]


@pytest.mark.django_db
def test_the_import_benchmarks_logs_import_with_the_messages_they_claim(
    tmp_path: Path, django_user_model: Any
) -> None:
    owner = django_user_model.objects.create_user("bench")
    claude, codex = tmp_path / "claude.jsonl", tmp_path / "rollout.jsonl"
    claimed = [
        write_claude_log(claude, seed=1, messages=90),
        write_codex_rollout(codex, seed=3, messages=60),
    ]

    imported = [import_transcript(path, owner)[0] for path in (claude, codex)]

    assert [import_report(session)["messages"] for session in imported] == claimed
    assert [session.compactions for session in imported] == [1, 0]


@pytest.mark.django_db
def test_the_hook_stop_benchmark_runs_to_its_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its logs must sit where a runtime writes them: the route reads no other log."""
    monkeypatch.setattr(hook_stop, "MESSAGES", 40)
    monkeypatch.setattr(hook_stop, "ROUNDS", 1)
    hook_stop.run()
    assert "Stop -> prepared" in capsys.readouterr().out
