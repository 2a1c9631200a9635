"""The runtimes' folders a user switches on in Settings → Conversation Collaboration, and
``follow_sessions`` without folders following them (``host.folders``, ``SwitchedFollower``)."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import translation
from shared_files import SAMPLES

from follower.models import FollowerEvent
from host.folders import runtime_folders
from host.importers.following import SwitchedFollower
from host.models import FollowedFolder, Session

HTMX = {"HX-Request": "true"}
CODEX_LOG = "codex-fork.jsonl"
CLAUDE_LOG = "claude-code-damaged.jsonl"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The runtimes' folders under ``tmp_path`` (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``), each
    with one log; returns them by runtime."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    folders = {"claude": tmp_path / "claude/projects/-w", "codex": tmp_path / "codex/sessions/d"}
    for folder, log in ((folders["claude"], CLAUDE_LOG), (folders["codex"], CODEX_LOG)):
        folder.mkdir(parents=True)
        (folder / log).write_bytes((SAMPLES / log).read_bytes())
    return {"claude": tmp_path / "claude/projects", "codex": tmp_path / "codex/sessions"}


def switch_shown(html: str, runtime: str) -> bool:
    """Whether the page's switch of ``runtime``'s folder (``claude-code``, ``codex``) is on."""
    found = re.search(rf'<input type="checkbox" name="on" id="folder-{runtime}-on"[^>]*>', html)
    assert found, f"no switch for {runtime}"
    return " checked>" in found.group(0)


def switch(client: Client, path: Path | str, on: bool) -> Any:
    data = {"path": str(path)} | ({"on": "on"} if on else {})
    return client.post(reverse("chat:folder"), data, headers=HTMX)


def test_the_folders_are_the_runtimes_defaults_or_their_environment(tmp_path: Path):
    home = tmp_path / "home"
    assert [(f.runtime, f.path) for f in runtime_folders({}, home)] == [
        ("Claude Code", home / ".claude/projects"),
        ("Codex", home / ".codex/sessions"),
    ]
    environ = {"CLAUDE_CONFIG_DIR": "/etc/cc", "CODEX_HOME": "/srv/codex"}
    assert [f.path for f in runtime_folders(environ, home)] == [
        Path("/etc/cc/projects"),
        Path("/srv/codex/sessions"),
    ]


@pytest.mark.django_db
def test_the_card_lists_the_folders_switched_off(
    client: Client, owner: User, homes: dict[str, Path]
):
    """Both folders, whether each exists, and each switch off until the user turns it on."""
    homes["codex"].rename(homes["codex"].with_name("elsewhere"))
    client.force_login(owner)
    with translation.override("en"):
        html = client.get(reverse("handoff_settings:card")).content.decode()
    assert f"<code>{homes['claude']}</code>\n      found" in html
    assert f"<code>{homes['codex']}</code>\n      not there (yet)" in html
    assert not switch_shown(html, "claude-code")
    assert not switch_shown(html, "codex")


@pytest.mark.django_db
def test_a_switch_is_saved_at_once_and_shown_on_the_users_other_tabs(
    client: Client, owner: User, homes: dict[str, Path]
):
    client.force_login(owner)
    response = switch(client, homes["codex"], on=True)
    assert response.status_code == 200
    assert switch_shown(response.content.decode(), "codex")
    assert list(FollowedFolder.objects.values_list("owner__username", "path")) == [
        ("ada", str(homes["codex"]))
    ]
    html = client.get(reverse("handoff_settings:card")).content.decode()
    assert switch_shown(html, "codex")
    assert not switch_shown(html, "claude-code")
    assert switch(client, homes["codex"], on=True).status_code == 200  # again: no change
    switch(client, homes["codex"], on=False)
    assert not FollowedFolder.objects.exists()
    events = FollowerEvent.objects.filter(user=owner, kind="folder.switched").order_by("seq")
    assert [e.payload for e in events] == [
        {"path": str(homes["codex"]), "on": True},
        {"path": str(homes["codex"]), "on": False},
    ]


@pytest.mark.django_db
def test_a_path_that_is_no_runtimes_folder_is_refused(
    client: Client, owner: User, homes: dict[str, Path]
):
    client.force_login(owner)
    with translation.override("en"):
        response = switch(client, "/etc", on=True)
    assert response.status_code == 400
    message = "/etc is not a runtime&#x27;s sessions folder. Nothing was saved."
    assert message in response.content.decode()
    assert not FollowedFolder.objects.exists()


@pytest.mark.django_db
def test_follow_sessions_follows_the_switched_on_folders_only(
    client: Client, owner: User, homes: dict[str, Path]
):
    """Without DIR, ``--once`` imports the folder the user switched on, into their sessions,
    and nothing of the folder left off."""
    client.force_login(owner)
    switch(client, homes["codex"], on=True)
    out = StringIO()
    call_command("follow_sessions", "--once", stdout=out, stderr=StringIO())
    assert {(s.owner.username, s.runtime) for s in Session.objects.all()} == {("ada", "codex")}


@pytest.mark.django_db
def test_follow_sessions_without_a_switch_on_imports_nothing(owner: User, homes: dict[str, Path]):
    call_command("follow_sessions", "--once", stdout=StringIO(), stderr=StringIO())
    assert not Session.objects.exists()


@pytest.mark.django_db
def test_a_running_follower_picks_up_a_switch(client: Client, owner: User, homes: dict[str, Path]):
    """A folder switched on while it runs is imported at its next read of the switches; one
    switched off is no longer read."""
    follower = SwitchedFollower([], None, quiet=0)
    follower.reconcile()
    client.force_login(owner)
    switch(client, homes["claude"], on=True)
    follower.switches_read = float("-inf")  # the switches are due to be read
    follower.poll()
    assert Session.objects.filter(owner=owner, runtime="claude").count() == 1
    switch(client, homes["claude"], on=False)
    follower.switches_read = float("-inf")
    follower.poll()
    assert follower.folders == []
    log = next(homes["claude"].rglob("*.jsonl"))
    follower.look([log])
    assert follower.seen == {}


@pytest.mark.django_db
def test_owner_without_a_folder_is_refused(owner: User):
    with pytest.raises(CommandError, match="name a DIR too"):
        call_command("follow_sessions", "--once", "--owner", "ada")
