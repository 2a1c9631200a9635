"""``manage.py import_transcript`` on the damaged and overlapping logs of ``../shared/cases/``:
every readable record imported, each damaged line reported as ``file:line: reason``, and each API
response counted once across files. The right values are CASES.md's, read from there.
"""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from shared_files import CASES, SAMPLES

from host.models import Message, Session

pytestmark = pytest.mark.django_db

USAGE_KEYS = ("uncached_input", "output", "cache_read", "cache_write")
# The project's own damaged log (samples/README.md), for the tests of any damaged log.
DAMAGED = SAMPLES / "claude-code-damaged.jsonl"


def case(name: str) -> Path:
    """Return ``../shared/cases/<name>``, skipping the test when it is absent."""
    path = CASES / name
    if not path.is_file():
        pytest.skip(f"shared cases not found at {CASES.resolve()} ({name})")
    return path


def right_result(name: str) -> str:
    """Return CASES.md's "right result" cell for the row naming ``name``."""
    rows = case("CASES.md").read_text("utf-8").splitlines()
    row = next(line for line in rows if line.startswith("| `") and f"`{name}`" in line)
    return row.split("|")[3]


def figure(text: str) -> int:
    """Read a figure written with spaces between thousands ("5 600")."""
    return int(text.replace(" ", ""))


def figures(pattern: str, text: str, count: int = 1) -> tuple[int, ...]:
    """Return the figures ``pattern``'s groups find in ``text`` (``AssertionError`` if none)."""
    found = re.search(pattern, text)
    assert found is not None, f"{pattern!r} not in CASES.md's {text!r}"
    return tuple(figure(group) for group in found.groups()[:count])


NUMBER = r"(\d[\d ]*\d|\d)"
SLASHED = " / ".join([NUMBER] * 4)
NAMED = ", ".join(f"{bucket} {NUMBER}" for bucket in USAGE_KEYS)


def run(*paths: Path) -> tuple[list[dict[str, Any]], str]:
    """Run the command with ``--json``; return the printed objects and stderr."""
    out, err = StringIO(), StringIO()
    call_command("import_transcript", *map(str, paths), "--json", stdout=out, stderr=err)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def usage_of(report: dict[str, Any]) -> tuple[int, ...]:
    return tuple(report["usage"][key] for key in USAGE_KEYS)


def test_lone_surrogates_import_as_replacement_characters_and_the_cut_line_is_reported() -> None:
    path = case("lone-surrogates.jsonl")

    right = right_result("lone-surrogates.jsonl")

    [report], _ = run(path)

    assert (report["messages"],) == figures(r"(\d+) records", right)
    assert usage_of(report) == figures(f"usage {SLASHED}", right, 4)
    contents = list(Message.objects.order_by("seq").values_list("content", flat=True))
    assert contents[0] == "café 漢字 😀 — read latin1.txt"  # valid text kept exactly
    assert "temperature 25\ufffdC" in contents
    assert "The file ends with a split emoji \ufffd" in contents
    assert report["damaged_lines"] == [
        f"{path}:3: repaired: lone surrogates stored as U+FFFD",
        f"{path}:4: repaired: lone surrogates stored as U+FFFD",
        f"{path}:5: skipped: not valid JSON (Unterminated string starting at: line 1 column 118 "
        "(char 117))",
    ]


def test_nul_padding_left_by_a_crash_is_removed_and_every_record_imported() -> None:
    path = case("nul-padded.jsonl")

    right = right_result("nul-padded.jsonl")

    [report], _ = run(path)

    assert (report["messages"],) == figures(r"(\d+) valid records", right)
    assert usage_of(report) == figures(f"usage {SLASHED}", right, 4)
    assert report["damaged_lines"] == [
        f"{path}:4: repaired: NUL padding removed",
        f"{path}:7: skipped: only NUL bytes",
    ]


def test_damaged_lines_are_listed_in_the_readable_summary_too() -> None:
    path = DAMAGED
    out = StringIO()

    call_command("import_transcript", str(path), stdout=out)

    assert f"  {path}:9: repaired: NUL padding removed" in out.getvalue().splitlines()


def test_a_file_without_any_valid_record_is_an_error_and_the_others_still_import(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b'{"type": "user", "mess\n\x00\x00\x00\n')
    out = StringIO()

    with pytest.raises(CommandError) as raised:
        call_command(
            "import_transcript",
            str(broken),
            str(DAMAGED),
            "--json",
            stdout=out,
        )

    assert f"{broken}: no valid record in this transcript" in str(raised.value)
    assert f"{broken}:2: skipped: only NUL bytes" in str(raised.value)
    assert Session.objects.count() == 1
    assert len(out.getvalue().splitlines()) == 1


def test_a_resumed_session_counts_each_response_once_across_both_files() -> None:
    first, resumed = case("resumed-a.jsonl"), case("resumed-b.jsonl")
    right = right_result("resumed-a.jsonl")

    [alone], _ = run(first)
    assert usage_of(alone) == figures(f"alone = {SLASHED}", right, 4)
    [copy], _ = run(resumed)

    summed = tuple(map(sum, zip(usage_of(alone), usage_of(copy), strict=True)))
    assert summed == figures(NAMED, right, 4)
    responses = figures(r"\((\d+) responses\)", right)
    assert (Message.objects.exclude(uncached_input_tokens=None).count(),) == responses
    before = Message.objects.count()
    reports, _ = run(first, resumed)
    assert [report["skipped"] for report in reports] == ["already-imported"] * 2
    assert Message.objects.count() == before


def test_the_resumed_copy_imported_first_keeps_the_shared_response() -> None:
    reports, _ = run(case("resumed-b.jsonl"), case("resumed-a.jsonl"))

    summed = tuple(map(sum, zip(*map(usage_of, reports), strict=True)))
    assert summed == figures(NAMED, right_result("resumed-a.jsonl"), 4)


def test_a_forked_codex_rollout_counts_only_its_own_usage() -> None:
    right = right_result("codex-fork.jsonl")

    [report], _ = run(case("codex-fork.jsonl"))

    assert usage_of(report) == figures(NAMED, right, 4)
    assert (report["tokens"]["cumulative"]["value"],) == figures(f"cumulative {NUMBER}", right)
    assert (report["tokens"]["context"]["value"],) == figures(f"context {NUMBER}", right)
    assert (report["turns"],) == figures(r"(\d+) turn", right)
    assert report["model"] == re.findall(r"model (\S+)", right)[0]
    session = Session.objects.get()
    assert "Make parse_date timezone aware" not in session.messages.values_list(
        "content", flat=True
    )


def test_an_unexpected_error_in_one_file_never_stops_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from host.management.commands import import_transcript as command

    failing = tmp_path / "failing.jsonl"
    real = command.import_transcript

    def import_or_crash(path: Path, *args: Any) -> list[Session]:
        if path == failing:
            raise UnicodeEncodeError("utf-8", "\udcb2", 0, 1, "surrogates not allowed")
        return real(path, *args)

    monkeypatch.setattr(command, "import_transcript", import_or_crash)
    out = StringIO()

    with pytest.raises(CommandError, match=rf"{failing}: import failed \(UnicodeEncodeError"):
        call_command("import_transcript", str(failing), str(DAMAGED), "--json", stdout=out)

    assert len(out.getvalue().splitlines()) == 1
    assert Session.objects.count() == 1
