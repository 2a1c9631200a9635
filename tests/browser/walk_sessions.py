"""The sessions the screen walks show besides the demo's conversations: a Claude Code session
followed from its log (a followed folder switched on in Settings), and a terminal session whose
brief waits in review (its page gives ``/clear`` and the new-terminal command instead of the
commit button); signing in by the form's field ids, whatever the page's language, and
sending a line from the composer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from shared_files import SAMPLES

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from host.demo import DEMO_PASSWORD
from host.external import note_hooks
from host.folders import runtime_folders
from host.importers.live import follow_step
from host.models import FollowedFolder, Session

FOLLOWED_LOG = "claude-code-1.x-sidechains.jsonl"
TERMINAL_LOG = "claude-code-2.x-epic.jsonl"


def followed_session(user: Any, tmp: Path, sample: str = FOLLOWED_LOG) -> Session:
    """The main session of the Claude Code log ``samples/<sample>``, followed for ``user``
    through the Claude Code folder (switched on once, as Settings does)."""
    folder = runtime_folders()[0]
    FollowedFolder.objects.get_or_create(owner=user, path=str(folder.path))
    log = tmp / sample
    shutil.copyfile(SAMPLES / sample, log)
    follow_step(log, user, settle=True)
    return Session.objects.get(owner=user, external_id=log_session_id(log), parent__isnull=True)


def log_session_id(log: Path) -> str:
    """The ``sessionId`` of the first line of a Claude Code log that has one."""
    for line in log.read_text().splitlines():
        key = json.loads(line).get("sessionId")
        if key:
            return str(key)
    raise ValueError(f"{log} names no session")


def waiting_in_terminal(user: Any, tmp: Path) -> Session:
    """A followed Claude Code session whose hooks run, with review on and a handoff prepared:
    its brief waits, and its page gives the way to the successor in the terminal."""
    session = followed_session(user, tmp, TERMINAL_LOG)
    note_hooks(session)
    operations.review_on(session.pk)
    outcome = operations.run_attempt(session.pk, manual=True)
    assert HandoffRecord.objects.get(source=session).phase == Phase.PREPARED, outcome
    return session


def sign_in(page: Any, base: str, user: Any) -> None:
    """Sign in through the form by its fields' ids (its labels are in the page's language)."""
    page.goto(f"{base}/accounts/login/")
    page.locator("#id_username").fill(user.get_username())
    page.locator("#id_password").fill(DEMO_PASSWORD)
    page.locator("#id_password").press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def send(page: Any, text: str) -> None:
    """Type ``text`` in the conversation's composer and send it (Enter)."""
    composer = page.locator("#composer textarea")
    composer.fill(text)
    composer.press("Enter")
