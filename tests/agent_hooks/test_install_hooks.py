"""``manage.py agent_hooks install|uninstall|status`` on settings files in a scratch home.

Installing keeps the user's own entries and is idempotent; uninstalling gives back the file's
exact bytes (or removes a file the install created); the token lives only in the 0600 token
file; the server must be on this machine (docs/operations.md, "Agent runtime hooks").
"""

from __future__ import annotations

import io
import json
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from agent_hooks import install as install_module
from agent_hooks.hook import deadline_for
from agent_hooks.hook_status import snake
from agent_hooks.install import EVENTS, is_ours
from host.auth import token_digest
from host.models import ApiToken
from tests.agent_hooks.hook_stub import closed_port, fixture, scripted_route

pytestmark = pytest.mark.django_db

SERVER = "http://127.0.0.1:8765"
USER_SETTINGS = (
    b'{\n    "model": "opus",\n    "hooks": {\n        "Stop": [\n            {"hooks": [{"type": '
    b'"command", "command": "notify-send done"}]}\n        ]\n    },\n    "env": {"A": "1"}\n}\n'
)
"""A user's own settings, written by hand (4-space indent, inline objects): not as we dump."""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch home folder; the runtimes' and XDG variables unset."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "USERPROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(
        install_module.CLAUDE_MANAGED_SETTINGS, "linux", tmp_path / "managed-settings.json"
    )
    monkeypatch.setitem(install_module.CODEX_REQUIREMENTS, "linux", tmp_path / "requirements.toml")
    return folder


@pytest.fixture
def alice(db: Any) -> User:
    return User.objects.create_user("alice", password="pw")


def hooks(action: str, *args: str) -> str:
    """Run ``manage.py agent_hooks ACTION ARGS`` and return what it printed."""
    out = io.StringIO()
    call_command("agent_hooks", action, *args, stdout=out)
    return out.getvalue()


def install(runtime: str = "claude", *args: str) -> str:
    return hooks("install", "--runtime", runtime, "--server", SERVER, "--user", "alice", *args)


def ours_by_event(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The product's handlers in a settings document, by event."""
    return {
        event: [h for group in groups for h in group["hooks"] if is_ours(h)]
        for event, groups in document.get("hooks", {}).items()
    }


def test_install_twice_keeps_one_entry_each_and_the_users_own_then_uninstall_restores_bytes(
    home, alice
):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_SETTINGS)

    first = install()
    second = install()

    document = json.loads(settings.read_bytes())
    assert document["model"] == "opus" and document["env"] == {"A": "1"}
    assert {"type": "command", "command": "notify-send done"} in [
        h for group in document["hooks"]["Stop"] for h in group["hooks"]
    ]
    assert {event: len(found) for event, found in ours_by_event(document).items()} == {
        event: 1 for event in EVENTS["claude"]
    }
    backup = settings.with_name("settings.json.session-handoff.bak")
    assert backup.read_bytes() == USER_SETTINGS
    assert "Kept the token" in second and "Wrote a new token" in first
    assert "restart" in first

    out = hooks("uninstall", "--runtime", "claude")
    assert settings.read_bytes() == USER_SETTINGS
    assert not backup.exists()
    assert "as it was before" in out


def test_the_token_is_in_a_0600_file_only_and_belongs_to_the_user(home, alice):
    out = install("claude", "--status-line")

    token_file = home / ".config" / "session-handoff" / "token"
    token = token_file.read_text().strip()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert ApiToken.objects.filter(user=alice, digest=token_digest(token)).exists()
    settings_text = (home / ".claude" / "settings.json").read_text()
    assert token not in settings_text and token not in out
    assert str(token_file) in settings_text, "the command names the token file"


def test_xdg_config_home_holds_the_token_file(home, alice, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    install()
    assert (tmp_path / "xdg" / "session-handoff" / "token").is_file()


def test_a_file_the_install_created_is_removed_by_uninstall(home, alice):
    settings = home / ".claude" / "settings.json"
    install("claude", "--status-line")
    assert settings.is_file()
    hooks("uninstall", "--runtime", "claude")
    assert not settings.exists()


def test_a_crash_while_writing_the_settings_leaves_the_file_as_it_was(home, alice, monkeypatch):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_SETTINGS)
    real_replace = install_module.os.replace

    def crash_on_settings(source: str, target: Any) -> None:
        if Path(target) == settings:
            raise OSError("disk full")
        real_replace(source, target)

    monkeypatch.setattr(install_module.os, "replace", crash_on_settings)
    with pytest.raises(CommandError, match="disk full"):
        install()
    assert settings.read_bytes() == USER_SETTINGS
    assert sorted(p.name for p in settings.parent.iterdir()) == [
        "settings.json",
        "settings.json.session-handoff.bak",
    ], "no temporary file is left behind"

    monkeypatch.setattr(install_module.os, "replace", real_replace)
    install()
    hooks("uninstall", "--runtime", "claude")
    assert settings.read_bytes() == USER_SETTINGS


def test_uninstall_after_other_changes_removes_only_ours_and_keeps_the_backup(home, alice):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USER_SETTINGS)
    install()
    document = json.loads(settings.read_bytes())
    document["theme"] = "dark"
    settings.write_text(json.dumps(document))

    hooks("uninstall", "--runtime", "claude")

    left = json.loads(settings.read_bytes())
    assert left["theme"] == "dark" and left["model"] == "opus"
    assert ours_by_event(left) == {"Stop": []}
    assert settings.with_name("settings.json.session-handoff.bak").read_bytes() == USER_SETTINGS


def test_the_runtime_timeouts_outlast_the_commands_deadlines(home, alice):
    install()
    hooks("install", "--runtime", "codex", "--server", SERVER, "--user", "alice")
    for path in (home / ".claude" / "settings.json", home / ".codex" / "hooks.json"):
        for event, handlers in ours_by_event(json.loads(path.read_bytes())).items():
            assert handlers[0]["timeout"] > deadline_for(event), (path, event)


def test_codex_goes_to_codex_home_without_subagent_events(home, alice, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    hooks("install", "--runtime", "codex", "--server", SERVER, "--user", "alice")
    document = json.loads((tmp_path / "codex" / "hooks.json").read_bytes())
    assert set(ours_by_event(document)) == set(EVENTS["codex"])
    assert "SubagentStart" not in document["hooks"]
    assert ours_by_event(document)["SessionEnd"][0]["timeout"] == 3


def test_project_scope_writes_the_uncommitted_local_settings(home, alice, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    install("claude", "--scope", "project", str(project))
    assert ours_by_event(json.loads((project / ".claude" / "settings.local.json").read_bytes()))
    assert not (home / ".claude" / "settings.json").exists()


def test_the_settings_file_option_names_the_file(home, alice, tmp_path):
    target = tmp_path / "elsewhere.json"
    install("claude", "--settings-file", str(target))
    assert ours_by_event(json.loads(target.read_bytes()))


@pytest.mark.parametrize(
    "server", ["http://192.168.1.20:8000", "http://example.com", "https://127.0.0.1:8000"]
)
def test_a_server_off_this_machine_is_refused_and_nothing_written(home, alice, server):
    with pytest.raises(CommandError, match="on this machine"):
        hooks("install", "--runtime", "claude", "--server", server, "--user", "alice")
    assert not (home / ".claude").exists()
    assert not (home / ".config").exists()


def test_a_settings_file_that_is_not_json_is_refused_unchanged(home, alice):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"model": "opus",')
    with pytest.raises(CommandError, match="not valid JSON"):
        install()
    assert settings.read_bytes() == b'{"model": "opus",'


@pytest.mark.parametrize("entry", ["null", '"notify-send done"', '{"hooks": []}'])
def test_an_event_that_is_not_a_list_of_groups_is_refused_unchanged(home, alice, entry):
    """A hand-edited ``"Stop": "..."`` (or null, or one group without its list) is refused
    naming the event, the file left as it was: it used to crash (null) or be rewritten into a
    list of its characters that uninstall could not give back."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    raw = f'{{"hooks": {{"Stop": {entry}}}}}'.encode()
    settings.write_bytes(raw)
    with pytest.raises(CommandError, match="hooks.Stop is not a list"):
        install()
    assert settings.read_bytes() == raw


def test_an_unknown_user_is_refused(home, db):
    with pytest.raises(CommandError, match="No active user"):
        install()
    assert not (home / ".claude").exists()


def test_the_status_line_is_installed_only_where_there_is_none(home, alice):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    own = {"type": "command", "command": "~/.claude/statusline.sh"}
    settings.write_text(json.dumps({"statusLine": own}))

    out = install("claude", "--status-line")

    assert json.loads(settings.read_bytes())["statusLine"] == own
    assert "--status-line" in out and "combine" in out
    hooks("uninstall", "--runtime", "claude")
    settings.write_text("{}")
    install("claude", "--status-line")
    assert is_ours(json.loads(settings.read_bytes())["statusLine"])


def test_the_installed_command_runs_and_prints_the_routes_answer(home, alice):
    settings = home / ".claude" / "settings.json"
    with scripted_route() as route:
        hooks("install", "--runtime", "claude", "--server", route.url, "--user", "alice")
        command = ours_by_event(json.loads(settings.read_bytes()))["Stop"][0]["command"]
        route.answer("/api/hooks/claude", output={"systemMessage": "Hands off at 120k"})
        done = subprocess.run(
            ["sh", "-c", command], input=fixture("claude", "stop"), capture_output=True, timeout=30
        )
    assert json.loads(done.stdout) == {"systemMessage": "Hands off at 120k"}
    token = (home / ".config" / "session-handoff" / "token").read_text().strip()
    assert route.received[0].headers["Authorization"] == f"Bearer {token}"
    assert shlex.split(command)[1:3] == ["-I", "-S"]


def test_status_says_what_is_installed_and_that_the_server_does_not_answer(home, alice):
    hooks("install", "--runtime", "claude", "--server", closed_port(), "--user", "alice")
    out = hooks("status", "--runtime", "claude")
    assert "Installed in" in out and "SessionStart" in out
    assert "does not answer" in out
    assert "restart" in out


def test_status_names_managed_settings_that_disable_hooks(home, alice, tmp_path):
    install()
    (tmp_path / "managed-settings.json").write_text('{"disableAllHooks": true}')
    out = hooks("status", "--runtime", "claude", "--server", closed_port())
    assert "disableAllHooks is true in the managed settings" in out


def test_status_of_codex_names_the_missing_trust_step_and_a_disabled_feature(home, alice):
    hooks("install", "--runtime", "codex", "--server", SERVER, "--user", "alice")
    out = hooks("status", "--runtime", "codex", "--server", closed_port())
    assert "await the trust step" in out and "/hooks" in out

    hooks_file = home / ".codex" / "hooks.json"
    document = json.loads(hooks_file.read_bytes())
    trusted = "".join(
        f'[hooks.state."{hooks_file}:{snake(event)}:{g}:0"]\ntrusted_hash = "x"\n'
        for event, groups in document["hooks"].items()
        for g, _ in enumerate(groups)
    )
    (home / ".codex" / "config.toml").write_text("[features]\nhooks = false\n\n" + trusted)
    out = hooks("status", "--runtime", "codex", "--server", closed_port())
    assert "await the trust step" not in out
    assert "hooks = false" in out
