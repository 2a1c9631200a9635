"""``python manage.py handoff ACTION SESSION [--wait] [--brief FILE] [--json]`` (issue 2 §7).

ACTION is one of ``status``, ``enable``, ``disable``, ``now``, ``review`` (show the handoff
waiting for review), ``commit`` (commit it; ``--brief FILE`` the edited brief as JSON, ``-``
for standard input), ``discard``, ``review-on`` / ``review-off`` (this conversation's handoffs
wait for review, or do not).

``python manage.py handoff export [--user U] [--out FILE]`` writes seed 000's ``handoffs.json``
version 1 (``handoff.export``): the sessions of user U (a username), or of every user without
``--user``; to FILE, or standard output without ``--out``.

SESSION is a session UUID or a unique prefix of at least six characters of one. Every action
prints the status report (issue 4 §6: the same report as the API, the composer and the card),
as JSON with ``--json`` or as a short readable block.

``now`` requests an attempt and returns (a worker runs it). ``now --wait`` runs the attempt here
(seed 000's eight steps) and prints its record; it exits non-zero when the attempt was deferred
(the status with its blockers is printed, exit 2), failed (the record is printed, exit 1) or
committed without starting the successor (the record is printed, exit 3). A refusal (unknown
session, a subagent, an attempt already running) is a ``CommandError`` with nothing changed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from handoff import export, operations, services
from handoff.attempt import AttemptOutcome, Outcome
from handoff.core.phases import discarded_note
from handoff.exceptions import HandoffError
from handoff.shapes import BackoffOut, RecordOut, StatusOut
from handoff.status import record_dict

MIN_PREFIX = 6
EXPORT = "export"
EXIT_FAILED = 1
EXIT_DEFERRED = 2
EXIT_START_PENDING = 3
_UUID_TEXT = re.compile(r"[0-9a-f-]+")


def resolve_session(text: str) -> str:
    """Return the id of the one session whose UUID is ``text`` or starts with it.

    Raises ``CommandError`` for a prefix shorter than six characters, one no session id starts
    with, or one several session ids start with (they are listed).
    """
    wanted = text.strip().lower()
    if len(wanted) < MIN_PREFIX or not _UUID_TEXT.fullmatch(wanted):
        raise CommandError(
            f"{text!r} is not a session id: give the UUID or at least {MIN_PREFIX} of its "
            "first hex characters."
        )
    controller = services.session_controller()
    if controller is None:
        raise CommandError("The host provides no session controller: sessions cannot be found.")
    matches = controller.ids_starting_with(wanted, limit=5)
    if not matches:
        raise CommandError(f"No session id starts with {wanted!r}.")
    if len(matches) > 1:
        raise CommandError(
            f"{wanted!r} matches several sessions ({', '.join(matches)}); give more characters."
        )
    return matches[0]


def read_brief(path: str) -> Any:
    """Return the JSON in file ``path`` (``-``: standard input); ``CommandError`` when it cannot
    be read or is not JSON (the brief's own rules are checked by the commit)."""
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise CommandError(f"--brief {path}: {exc}") from exc


def _yes(flag: object) -> str:
    return "yes" if flag else "no"


def _last_line(last: RecordOut | None) -> str:
    if last is None:
        return "none"
    line = f"{last['phase']} ({last['reason']})"
    if last["target"]:
        line += f" -> {last['target']}"
    note = discarded_note(last["phase"], last["error"])
    if note or last["error"]:
        line += f"; {note}" if note else f"; error: {last['error']}"
    return line


def _inheritance_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per inheritance row (seed 003 §6.1–6.2): setting, outcome, detail."""
    lines = []
    for row in rows:
        detail = f" ({row['detail']})" if row.get("detail") else ""
        lines.append(f"  inheritance  {row['setting']}: {row['outcome']}{detail}")
    return lines


def _review_line(last: RecordOut | None) -> str:
    if last is None or not last["review_until"]:
        return ""
    return f" · a handoff waits for review until {last['review_until']} (commit or discard)"


def _backoff_line(backoff: BackoffOut | None) -> str:
    if backoff is None:
        return "none"
    return (
        f"{backoff['failures']} failed automatic attempt(s): the next may run after "
        f"{backoff['until']}; last error: {backoff['reason'] or 'none'}"
    )


def format_status(report: StatusOut) -> str:
    """Return the status report as a short readable block.

    Switches, tokens with basis and label, the context meter in words, where the session came
    from and went (lineage), deferred blockers, the last record with its inheritance report,
    plan mode and compaction availability, and the service notices.
    """
    tokens = report["tokens"]
    available = "available" if report["plan_mode_available"] else "not available"
    compaction = "available" if report["compaction_available"] else "not available"
    lines = [
        f"Session {report['session']}",
        f"  switches     enabled: {_yes(report['enabled'])} · requested: "
        f"{_yes(report['requested'])} · autoHandoff: {'on' if report['auto_handoff'] else 'off'}",
        f"  tokens       {tokens['value']} ({tokens['basis']}, {tokens['label']})",
        f"  turns        {report['turns']} · compactions: {report['compactions']}",
        f"  meter        {report['meter']['summary']}",
        f"  came from    {report['predecessor'] or 'none'} · "
        f"went to: {report['successor'] or 'none'}",
        f"  redirect     {report['redirect'] or 'none'}",
        f"  deferred     {', '.join(report['deferred']) or 'none'}",
        f"  review       {'on' if report['review'] else 'off'}{_review_line(report['last'])}",
        f"  backoff      {_backoff_line(report['backoff'])}",
        f"  last         {_last_line(report['last'])}",
        f"  plan mode    {available} · automatic compaction: {compaction}",
    ]
    lines += _inheritance_lines(report["inheritance"])
    lines += [f"  note         {notice}" for notice in report["notices"]]
    return "\n".join(lines)


def format_record(record: RecordOut) -> str:
    """Return a record as a short readable block (phase, reason, source, target, metrics)."""
    metrics = record["metrics"]
    lines = [
        f"Handoff {record['id']}: {record['phase']} ({record['reason']})",
        f"  source       {record['source']} at revision {record['source_revision']}",
        f"  target       {record['target'] or 'none'}",
        f"  metrics      {metrics['tokens']} tokens · {metrics['turns']} turns · "
        f"{metrics['compactions']} compactions · capacity {metrics['capacity']}",
    ]
    if record["error"]:
        lines.append(f"  error        {record['error']}")
    if record["review_until"]:
        lines.append(
            f"  review       waiting until {record['review_until']}: "
            f"handoff commit|discard {record['source']}"
        )
    lines += _inheritance_lines(record["inheritance"])
    return "\n".join(lines)


class Command(BaseCommand):
    help = (
        "Show or switch a session's handoff, or hand it off now "
        "(--wait: run the attempt here and print its record)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "action",
            choices=[*(action.value for action in operations.Action), EXPORT],
            help="what to do",
        )
        parser.add_argument(
            "session",
            nargs="?",
            help=f"session UUID, or a unique prefix of at least {MIN_PREFIX} characters "
            "(every action but export)",
        )
        parser.add_argument("--user", help="with export: only this user's sessions (username)")
        parser.add_argument("--out", metavar="FILE", help="with export: write here, not stdout")
        parser.add_argument(
            "--wait",
            action="store_true",
            help="with now: run the attempt in this process and print its record",
        )
        parser.add_argument(
            "--brief",
            metavar="FILE",
            help="with commit: the edited brief, a JSON file ('-': standard input)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the action; ``CommandError`` (non-zero exit) for refusals and unfinished waits."""
        action, as_json = options["action"], options["json"]
        if action == EXPORT:
            self._export(options["user"], options["out"])
            return
        if options["user"] or options["out"]:
            raise CommandError("--user and --out apply to 'export' only.")
        if not options["session"]:
            raise CommandError(f"handoff {action}: give the session.")
        if options["wait"] and action != "now":
            raise CommandError("--wait applies to 'now' only.")
        if options["brief"] and action != "commit":
            raise CommandError("--brief applies to 'commit' only.")
        session_id = resolve_session(options["session"])
        try:
            if options["wait"]:
                self._run_now(session_id, as_json)
            elif options["brief"]:
                brief = read_brief(options["brief"])
                self._print_status(operations.commit_review(session_id, brief), as_json)
            else:
                self._print_status(operations.act(action, session_id), as_json)
        except HandoffError as exc:
            raise CommandError(f"handoff {action}: {exc}") from exc

    def _export(self, username: str | None, out: str | None) -> None:
        """Write ``handoffs.json`` version 1; ``CommandError`` for an unknown user or a file
        that cannot be written."""
        owner_id = None
        if username is not None:
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                raise CommandError(f"No user {username!r}.")
            owner_id = user.pk
        text = json.dumps(export.export(owner_id), ensure_ascii=False, indent=2)
        if out is None:
            self.stdout.write(text)
            return
        try:
            Path(out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"--out {out}: {exc}") from exc

    def _print_status(self, report: StatusOut, as_json: bool) -> None:
        self.stdout.write(
            json.dumps(report, ensure_ascii=False) if as_json else format_status(report)
        )

    def _print_record(self, record: RecordOut, as_json: bool) -> None:
        self.stdout.write(
            json.dumps(record, ensure_ascii=False) if as_json else format_record(record)
        )

    def _run_now(self, session_id: str, as_json: bool) -> None:
        """Run a manual attempt synchronously and print how it ended."""
        outcome = operations.run_attempt(session_id, manual=True)
        if outcome.outcome is Outcome.DEFERRED:
            self._print_status(operations.status(session_id), as_json)
            raise CommandError(
                f"handoff deferred by {', '.join(outcome.blockers)}", returncode=EXIT_DEFERRED
            )
        if outcome.record is None:
            raise CommandError(f"handoff now: {outcome.detail}", returncode=EXIT_FAILED)
        self._print_record(record_dict(outcome.record), as_json)
        self._exit_for(outcome)

    @staticmethod
    def _exit_for(outcome: AttemptOutcome) -> None:
        assert outcome.record is not None
        if outcome.outcome is Outcome.FAILED:
            raise CommandError(f"handoff failed: {outcome.record.error}", returncode=EXIT_FAILED)
        if outcome.outcome is Outcome.COMMITTED_START_PENDING:
            raise CommandError(
                f"handoff committed but the successor {outcome.record.target_id} did not start; "
                "open it to continue (disable stops forwarding)",
                returncode=EXIT_START_PENDING,
            )
