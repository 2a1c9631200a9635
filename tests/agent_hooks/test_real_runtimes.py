"""Opt-in: the real ``claude`` / ``codex`` binaries run the installed hooks.

Each test installs the hooks into a scratch project (project scope), runs the runtime once
headless there, and checks that the scripted route received its SessionStart and Stop. They
make a model call, so they run only with ``HANDOFF_REAL_RUNTIMES=1`` and the binary on PATH
(with its login in place); otherwise they skip saying which is missing.

Codex runs a hook from ``hooks.json`` only after the user trusted it in ``/hooks`` and only in
a trusted project; ``codex exec`` has no review screen. Its test therefore runs in the folder
named by ``HANDOFF_REAL_CODEX_PROJECT``: run it once (it installs the hooks there and fails),
open ``codex`` in that folder, trust the project and the hooks in ``/hooks``, and run it again.
The token file goes to a scratch ``XDG_CONFIG_HOME``; the runtime's own login is used as is.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tests.agent_hooks.hook_stub import scripted_route

pytestmark = pytest.mark.django_db


def require(binary: str) -> str:
    """Return the binary's path, or skip naming what is missing."""
    if os.environ.get("HANDOFF_REAL_RUNTIMES") != "1":
        pytest.skip(f"opt-in: set HANDOFF_REAL_RUNTIMES=1 to run the real {binary} (a model call)")
    found = shutil.which(binary)
    if found is None:
        pytest.skip(f"the {binary} binary is not installed on this machine")
    return found


@pytest.fixture(autouse=True)
def scratch_token_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def run_once(runtime: str, command: list[str], project: Path) -> list[str]:
    """Install the hooks into ``project`` against a scripted route, run ``command`` there, and
    return the events the route received."""
    User.objects.create_user("alice", password="pw")
    with scripted_route() as route:
        for path in (f"/api/hooks/{runtime}", f"/api/hooks/{runtime}/ack"):
            route.answer(path, output=None)
        call_command(
            "agent_hooks", "install", "--runtime", runtime, "--server", route.url,
            "--user", "alice", "--scope", "project", str(project), stdout=io.StringIO(),
        )  # fmt: skip
        subprocess.run(command, cwd=project, capture_output=True, timeout=300, check=False)
        return [json.loads(r.body).get("hook_event_name") for r in route.received]


def test_claude_runs_the_installed_hooks(tmp_path):
    claude = require("claude")
    events = run_once("claude", [claude, "-p", "Reply with the single word OK."], tmp_path)
    assert "SessionStart" in events and "Stop" in events, events


def test_codex_runs_the_installed_hooks():
    codex = require("codex")
    folder = os.environ.get("HANDOFF_REAL_CODEX_PROJECT")
    if not folder:
        pytest.skip("set HANDOFF_REAL_CODEX_PROJECT to a folder Codex trusts (see the docstring)")
    command = [codex, "exec", "--skip-git-repo-check", "Reply with the single word OK."]
    events = run_once("codex", command, Path(folder))
    assert "SessionStart" in events and "Stop" in events, (
        f"{events}: trust {folder} and the hooks in {folder}/.codex/hooks.json in Codex's /hooks"
    )
