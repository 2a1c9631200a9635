"""``python manage.py handoff status|enable|disable|now SESSION [--wait] [--json]`` (issue 2 §7).

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
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from handoff import operations, services
from handoff.attempt import AttemptOutcome, Outcome
from handoff.exceptions import HandoffError
from handoff.shapes import RecordOut, StatusOut
from handoff.status import record_dict

MIN_PREFIX = 6
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


def _yes(flag: object) -> str:
    return "yes" if flag else "no"


def _last_line(last: RecordOut | None) -> str:
    if last is None:
        return "none"
    line = f"{last['phase']} ({last['reason']})"
    if last["target"]:
        line += f" -> {last['target']}"
    if last["error"]:
        line += f"; error: {last['error']}"
    return line


def _inheritance_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per inheritance row (seed 003 §6.1–6.2): setting, outcome, detail."""
    lines = []
    for row in rows:
        detail = f" ({row['detail']})" if row.get("detail") else ""
        lines.append(f"  inheritance  {row['setting']}: {row['outcome']}{detail}")
    return lines


def format_status(report: StatusOut) -> str:
    """Return the status report as a short readable block.

    Switches, tokens with basis and label, deferred blockers, the last record with its
    inheritance report, plan mode and compaction availability, and the service notices.
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
        f"  redirect     {report['redirect'] or 'none'}",
        f"  deferred     {', '.join(report['deferred']) or 'none'}",
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
    lines += _inheritance_lines(record["inheritance"])
    return "\n".join(lines)


class Command(BaseCommand):
    help = (
        "Show or switch a session's handoff, or hand it off now "
        "(--wait: run the attempt here and print its record)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "action", choices=[action.value for action in operations.Action], help="what to do"
        )
        parser.add_argument(
            "session", help=f"session UUID, or a unique prefix of at least {MIN_PREFIX} characters"
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="with now: run the attempt in this process and print its record",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the action; ``CommandError`` (non-zero exit) for refusals and unfinished waits."""
        action, as_json = options["action"], options["json"]
        if options["wait"] and action != "now":
            raise CommandError("--wait applies to 'now' only.")
        session_id = resolve_session(options["session"])
        try:
            if options["wait"]:
                self._run_now(session_id, as_json)
            else:
                self._print_status(operations.act(action, session_id), as_json)
        except HandoffError as exc:
            raise CommandError(f"handoff {action}: {exc}") from exc

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
