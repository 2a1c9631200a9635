"""The hook command, run for real as the runtime runs it, against a scripted route.

It prints the route's output and nothing else, acknowledges only after printing, and when the
server is down, silent, slow or answers badly it exits 0 with nothing on stdout, within its
deadline (docs/operations.md, "Agent runtime hooks"). Times are asserted only as loose bounds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_hooks.hook import DEADLINE, SESSION_START_DEADLINE, BadAnswer, response_body
from tests.agent_hooks.hook_stub import (
    closed_port,
    fixture,
    run_hook,
    scripted_route,
    silent_server,
)

TOKEN = "test-token-7f3a"
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
BLOCK = {"decision": "block", "reason": "A brief is ready: /clear to continue in a fresh session."}
BOUND = 5.0
"""Seconds a failing run must end within: a loose bound over the 1 s deadline, not a benchmark."""


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "stdout"


def test_prints_the_output_posts_the_payload_verbatim_and_acks_after_printing(token_file, out):
    payload = fixture("claude", "user_prompt_submit")
    with scripted_route() as route:
        route.stdout_file = out
        route.answer("/api/hooks/claude", output=BLOCK, ack=True)
        route.answer("/api/hooks/claude/ack", body=b"")
        run = run_hook(route.url, token_file, payload, out)

    assert run.returncode == 0
    assert run.stdout == (json.dumps(BLOCK) + "\n").encode()
    assert route.paths() == ["/api/hooks/claude", "/api/hooks/claude/ack"]
    hook, ack = route.received
    assert hook.body == payload
    assert hook.headers["Authorization"] == f"Bearer {TOKEN}"
    assert hook.headers["Content-Type"] == "application/json"
    assert UUID4.match(hook.headers["X-Hook-Delivery"])
    assert hook.headers["X-Hook-Process"].isdigit()
    assert json.loads(ack.body) == {"delivery": hook.headers["X-Hook-Delivery"]}
    assert ack.headers["Authorization"] == f"Bearer {TOKEN}"
    assert ack.stdout_then == run.stdout, "the ack arrived before the answer was printed"


def test_no_ack_when_the_route_asks_for_none(token_file, out):
    with scripted_route() as route:
        route.answer("/api/hooks/claude", output={"systemMessage": "Hands off at 120k"})
        run = run_hook(route.url, token_file, fixture("claude", "stop"), out)
    assert json.loads(run.stdout) == {"systemMessage": "Hands off at 120k"}
    assert route.paths() == ["/api/hooks/claude"]


def test_a_null_output_prints_nothing(token_file, out):
    with scripted_route() as route:
        route.answer("/api/hooks/claude", output=None)
        run = run_hook(route.url, token_file, fixture("claude", "pre_compact"), out)
    assert (run.returncode, run.stdout) == (0, b"")
    assert route.paths() == ["/api/hooks/claude"]


def test_codex_posts_to_its_own_route(token_file, out):
    payload = fixture("codex", "stop")
    with scripted_route() as route:
        route.answer("/api/hooks/codex", output={"systemMessage": "Brief ready"})
        run = run_hook(route.url, token_file, payload, out, runtime="codex")
    assert json.loads(run.stdout) == {"systemMessage": "Brief ready"}
    assert route.received[0].body == payload


@pytest.mark.parametrize(
    "status,body",
    [
        (500, b'{"output": {"systemMessage": "x"}, "ack": true}'),
        (401, b'{"detail": "Authentication required"}'),
        (200, b"<html>not json</html>"),
        (200, b'{"output": "a string", "ack": false}'),
        (200, b'{"output": {"systemMessage": "x"}, "ack": "yes"}'),
        (200, b"[1, 2]"),
    ],
)
def test_a_bad_answer_prints_nothing_and_acks_nothing(token_file, out, status, body):
    with scripted_route() as route:
        route.answer("/api/hooks/claude", body=body, status=status)
        run = run_hook(route.url, token_file, fixture("claude", "stop"), out)
    assert (run.returncode, run.stdout) == (0, b"")
    assert route.paths() == ["/api/hooks/claude"]
    assert b"skipped" in run.stderr


def test_server_down_exits_0_silently_within_the_bound(token_file, out):
    run = run_hook(closed_port(), token_file, fixture("claude", "stop"), out)
    assert (run.returncode, run.stdout) == (0, b"")
    assert run.seconds < BOUND


def test_a_server_that_never_answers_is_given_up_within_the_bound(token_file, out):
    with silent_server() as url:
        run = run_hook(url, token_file, fixture("claude", "user_prompt_submit"), out)
    assert (run.returncode, run.stdout) == (0, b"")
    assert run.seconds < BOUND
    assert b"TimeoutError" in run.stderr


def test_an_answer_past_the_deadline_is_not_printed_but_session_start_waits_longer(token_file, out):
    """A 2 s answer is past the 1 s deadline of a Stop, within the 10 s one of SessionStart."""
    assert DEADLINE < 2 < SESSION_START_DEADLINE
    with scripted_route() as route:
        route.answer("/api/hooks/claude", output={"systemMessage": "late"}, ack=True, delay=2)
        route.answer("/api/hooks/claude/ack", body=b"")
        late = run_hook(route.url, token_file, fixture("claude", "stop"), out)
        assert route.paths() == ["/api/hooks/claude"], "a late answer is never acknowledged"
        start = run_hook(route.url, token_file, fixture("claude", "session_start_clear"), out)
    assert (late.returncode, late.stdout) == (0, b"")
    assert json.loads(start.stdout) == {"systemMessage": "late"}
    assert route.paths()[-1] == "/api/hooks/claude/ack"


def test_a_missing_token_file_sends_nothing(tmp_path, out):
    with scripted_route() as route:
        route.answer("/api/hooks/claude", output=BLOCK)
        run = run_hook(route.url, tmp_path / "absent", fixture("claude", "stop"), out)
    assert (run.returncode, run.stdout, route.received) == (0, b"", [])


def test_bad_arguments_exit_0_without_output(token_file, out):
    run = run_hook("ftp://127.0.0.1:1", token_file, fixture("claude", "stop"), out, "--nonsense")
    assert (run.returncode, run.stdout) == (0, b"")


def test_a_payload_that_is_not_json_is_not_sent(token_file, out):
    with scripted_route() as route:
        route.answer("/api/hooks/claude", output=BLOCK)
        run = run_hook(route.url, token_file, b"not json", out)
    assert (run.returncode, run.stdout, route.received) == (0, b"", [])
    assert b"not json" not in run.stderr, "the payload is never echoed"


def test_the_status_line_prints_the_text(token_file, out):
    payload = fixture("claude", "status_line")
    with scripted_route() as route:
        route.answer("/api/hooks/claude/status-line", body=b'{"text": "hands off at 120k"}')
        run = run_hook(route.url, token_file, payload, out, "--status-line")
    assert run.stdout == b"hands off at 120k\n"
    assert route.received[0].body == payload


@pytest.mark.parametrize("body", [b'{"text": ""}', b"{}", b"nope"])
def test_the_status_line_prints_nothing_without_text(token_file, out, body):
    with scripted_route() as route:
        route.answer("/api/hooks/claude/status-line", body=body)
        run = run_hook(
            route.url, token_file, fixture("claude", "status_line"), out, "--status-line"
        )
    assert (run.returncode, run.stdout) == (0, b"")


def test_chunked_and_cut_answers():
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunked = head + b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    assert response_body(chunked) == b"hello world"
    with pytest.raises(BadAnswer):
        response_body(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
    with pytest.raises(BadAnswer):
        response_body(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
