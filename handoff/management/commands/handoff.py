"""``python manage.py handoff ACTION SESSION [--wait] [--brief FILE] [--json]``.

docs/api.md, ``handoff``, shows it in use.

ACTION is one of ``status``, ``enable``, ``disable``, ``now``, ``review`` (show the handoff
waiting for review and, without ``--json``, its brief as JSON to edit), ``commit`` (commit it;
``--brief FILE`` the edited brief as JSON, ``-`` for standard input), ``discard``,
``review-on`` / ``review-off`` (this conversation's handoffs wait for review, or do not).

``python manage.py handoff export [--user U] [--out FILE]`` writes ``handoffs.json``
version 1 (``handoff.export``): the sessions of user U (a username), or of every user without
``--user``; to FILE, or standard output without ``--out``.

SESSION is a session UUID or a unique prefix of at least six characters of one (on a host
whose session model has other keys, an integer …: the whole id). Every action
prints the status report (the same report as the API, the composer and the card),
as JSON with ``--json`` (machine keys, unchanged by the language) or as a short readable block
in the language the environment asks for (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``:
``LANG=zh_CN.UTF-8`` gives Chinese; ``common.locale_env``), else ``LANGUAGE_CODE``, as are the
refusals.

``now`` requests an attempt and returns (a worker runs it). ``now --wait`` runs the attempt here
(the eight steps of docs/spec.md, The transaction) and prints its record; it exits non-zero when the
attempt was deferred (the status with its blockers is printed, exit 2), failed (the record is
printed, exit 1) or committed without starting the successor (the record is printed, exit 3). A
refusal (unknown session, a subagent, an attempt already running) is a ``CommandError`` with nothing
changed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext, ngettext, pgettext

from common.locale_env import environment_language
from handoff import export, operations, services
from handoff.attempt import AttemptOutcome, Outcome
from handoff.core.phases import discarded_note
from handoff.core.tokens import TokenLabel, TokensOut
from handoff.exceptions import HandoffError
from handoff.inheritance import OUTCOME_LABELS, detail_text
from handoff.session_model import session_key, session_path_converter
from handoff.shapes import BackoffOut, RecordOut, StatusOut
from handoff.status import record_dict
from handoff.words.review import REVIEW_HERE, review_notice

MIN_PREFIX = 6
EXPORT = "export"
EXIT_FAILED = 1
EXIT_DEFERRED = 2
EXIT_START_PENDING = 3
_UUID_TEXT = re.compile(r"[0-9a-f-]+")


def resolve_session(text: str) -> str:
    """Return the id (as text) of the one session ``text`` names.

    On a host whose session model has UUID keys (``handoff.session_model``) ``text`` is the
    UUID or a unique prefix of at least six of its characters; on any other, the whole id as
    its primary key reads it (an integer …). Raises ``CommandError`` for text that is no id (a
    prefix shorter than six characters), an id or prefix no session has, or a prefix several
    session ids start with (they are listed); nothing is changed.
    """
    if session_path_converter() != "uuid":
        return _whole_id(text)
    wanted = text.strip().lower()
    if len(wanted) < MIN_PREFIX or not _UUID_TEXT.fullmatch(wanted):
        raise CommandError(
            gettext(
                "%(text)r is not a session id: give the UUID or at least %(minimum)s of its "
                "first hex characters."
            )
            % {"text": text, "minimum": MIN_PREFIX}
        )
    matches = _controller().ids_starting_with(wanted, limit=5)
    if not matches:
        raise CommandError(gettext("No session id starts with %(prefix)r.") % {"prefix": wanted})
    if len(matches) > 1:
        raise CommandError(
            gettext("%(prefix)r matches several sessions (%(ids)s); give more characters.")
            % {"prefix": wanted, "ids": ", ".join(matches)}
        )
    return matches[0]


def _whole_id(text: str) -> str:
    """The id ``text`` names whole, on a host whose keys are no UUIDs."""
    try:
        wanted = str(session_key(text.strip()))
    except ValueError as exc:
        raise CommandError(gettext("%(text)r is not a session id.") % {"text": text}) from exc
    if _controller().get(wanted) is None:
        raise CommandError(gettext("No session %(id)r.") % {"id": wanted})
    return wanted


def _controller() -> services.SessionController:
    controller = services.session_controller()
    if controller is None:
        raise CommandError(
            gettext("The host provides no session controller: sessions cannot be found.")
        )
    return controller


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


def _line(label: str, value: object) -> str:
    """One line of a readable block: the label in a column, then the value (labels are
    translated in the context "status label": a page's same word may read otherwise)."""
    return f"  {label:<12} {value}"


def _yes(flag: object) -> str:
    return gettext("yes") if flag else gettext("no")


def _on(flag: object) -> str:
    return gettext("on") if flag else gettext("off")


def _or_none(value: object) -> str:
    return str(value) if value else gettext("none")


def _available(flag: object) -> str:
    return gettext("available") if flag else gettext("not available")


def _last_line(last: RecordOut | None) -> str:
    if last is None:
        return gettext("none")
    line = f"{last['phase']} ({last['reason']})"
    if last["target"]:
        line += f" -> {last['target']}"
    note = discarded_note(last["phase"], last["error"])
    if note:
        line += f"; {note}"
    elif last["error"]:
        line += "; " + gettext("error: %(error)s") % {"error": last["error"]}
    return line


def _inheritance_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per inheritance row (docs/spec.md, Inheritance): setting, outcome, detail (outcome
    and detail in the active language, the setting as its identifier)."""
    lines = []
    for row in rows:
        outcome = OUTCOME_LABELS.get(row["outcome"], row["outcome"])
        detail = f" ({detail_text(row['detail'])})" if row.get("detail") else ""
        lines.append(
            _line(pgettext("status label", "inheritance"), f"{row['setting']}: {outcome}{detail}")
        )
    return lines


def _tokens_text(tokens: TokensOut) -> str:
    """The token figure with its basis and label ("150000 (context, exact)"); "unavailable
    (context)" when nothing measured it, as the page says, not a 0 that reads as a count."""
    if tokens["label"] == TokenLabel.UNAVAILABLE:
        return gettext("unavailable (%(basis)s)") % {"basis": tokens["basis"]}
    return f"{tokens['value']} ({tokens['basis']}, {tokens['label']})"


def _review_line(report: StatusOut) -> str:
    """The switch, then the brief waiting for review, if one does, with what the user is asked
    to do with it: the composer's words (``handoff.words.review``), so a terminal session's
    brief is not offered a commit."""
    line = _on(report["review"])
    last = report["last"]
    if last is None or not last["review_until"]:
        return line
    return line + gettext(" · a handoff waits for review until %(until)s (%(asks)s)") % {
        "until": last["review_until"],
        "asks": _asks(report["session"]),
    }


def _asks(session_id: str) -> Promise:
    """What the user is asked to do with the brief of ``session_id`` waiting for review, as its
    page asks it (``handoff.words.review``; a session no longer found: commit or discard)."""
    controller = services.session_controller()
    session = controller.get(session_id) if controller is not None else None
    return review_notice(session) if session is not None else REVIEW_HERE


def _waiting_line(record: RecordOut) -> str:
    """A record waiting for review: until when, and the command that commits or discards it;
    a terminal session's brief is claimed in its terminal instead, as its page says."""
    asks = _asks(record["source"])
    if asks is REVIEW_HERE:
        return gettext("waiting until %(review_until)s: handoff commit|discard %(source)s") % record
    return gettext("waiting until %(until)s: %(asks)s") % {
        "until": record["review_until"],
        "asks": asks,
    }


def _backoff_line(backoff: BackoffOut | None) -> str:
    if backoff is None:
        return gettext("none")
    return ngettext(
        "%(failures)s failed automatic attempt: the next may run after %(until)s; "
        "last error: %(error)s",
        "%(failures)s failed automatic attempts: the next may run after %(until)s; "
        "last error: %(error)s",
        backoff["failures"],
    ) % {
        "failures": backoff["failures"],
        "until": backoff["until"],
        "error": _or_none(backoff["reason"]),
    }


def format_status(report: StatusOut) -> str:
    """Return the status report as a short readable block.

    Switches, tokens with basis and label, the context meter in words, where the session came
    from and went (lineage), deferred blockers, the last record with its inheritance report,
    plan mode and compaction availability, and the service notices.
    """
    switches = gettext(
        "enabled: %(enabled)s · requested: %(requested)s · autoHandoff: %(auto)s"
    ) % {
        "enabled": _yes(report["enabled"]),
        "requested": _yes(report["requested"]),
        "auto": _on(report["auto_handoff"]),
    }
    lines = [
        gettext("Session %(session)s") % {"session": report["session"]},
        _line(pgettext("status label", "switches"), switches),
        _line(pgettext("status label", "tokens"), _tokens_text(report["tokens"])),
        _line(
            pgettext("status label", "turns"),
            gettext("%(turns)s · compactions: %(compactions)s")
            % {"turns": report["turns"], "compactions": report["compactions"]},
        ),
        _line(pgettext("status label", "meter"), report["meter"]["summary"]),
        _line(
            pgettext("status label", "came from"),
            gettext("%(predecessor)s · went to: %(successor)s")
            % {
                "predecessor": _or_none(report["predecessor"]),
                "successor": _or_none(report["successor"]),
            },
        ),
        _line(pgettext("status label", "redirect"), _or_none(report["redirect"])),
        _line(pgettext("status label", "deferred"), _or_none(", ".join(report["deferred"]))),
        _line(pgettext("status label", "review"), _review_line(report)),
        _line(pgettext("status label", "backoff"), _backoff_line(report["backoff"])),
        _line(pgettext("status label", "last"), _last_line(report["last"])),
        _line(
            pgettext("status label", "plan mode"),
            gettext("%(plan)s · automatic compaction: %(compaction)s")
            % {
                "plan": _available(report["plan_mode_available"]),
                "compaction": _available(report["compaction_available"]),
            },
        ),
    ]
    lines += _inheritance_lines(report["inheritance"])
    lines += [
        _line(pgettext("status label", "note"), gettext(notice)) for notice in report["notices"]
    ]
    return "\n".join(lines)


def format_record(record: RecordOut) -> str:
    """Return a record as a short readable block (phase, reason, source, target, metrics)."""
    lines = [
        gettext("Handoff %(id)s: %(phase)s (%(reason)s)") % record,
        _line(
            pgettext("status label", "source"),
            gettext("%(source)s at revision %(source_revision)s") % record,
        ),
        _line(pgettext("status label", "target"), _or_none(record["target"])),
        _line(
            pgettext("status label", "metrics"),
            gettext(
                "%(tokens)s tokens · %(turns)s turns · %(compactions)s compactions · "
                "capacity %(capacity)s"
            )
            % record["metrics"],
        ),
    ]
    if record["error"]:
        lines.append(_line(pgettext("status label", "error"), record["error"]))
    if record["review_until"]:
        lines.append(_line(pgettext("status label", "review"), _waiting_line(record)))
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
            help=f"session UUID, or a unique prefix of at least {MIN_PREFIX} characters; "
            "another kind of key whole (every action but export)",
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

    def run_from_argv(self, argv: list[str]) -> None:
        """Run from the command line in the environment's language (module docstring);
        ``call_command`` keeps its caller's."""
        with translation.override(environment_language() or translation.get_language()):
            super().run_from_argv(argv)

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the action; ``CommandError`` (non-zero exit) for refusals and unfinished waits."""
        action, as_json = options["action"], options["json"]
        if action == EXPORT:
            self._export(options["user"], options["out"])
            return
        if options["user"] or options["out"]:
            raise CommandError(gettext("--user and --out apply to 'export' only."))
        if not options["session"]:
            raise CommandError(
                gettext("handoff %(action)s: give the session.") % {"action": action}
            )
        if options["wait"] and action != "now":
            raise CommandError(gettext("--wait applies to 'now' only."))
        if options["brief"] and action != "commit":
            raise CommandError(gettext("--brief applies to 'commit' only."))
        session_id = resolve_session(options["session"])
        try:
            if options["wait"]:
                self._run_now(session_id, as_json)
            elif options["brief"]:
                brief = read_brief(options["brief"])
                self._print_status(operations.commit_review(session_id, brief), as_json)
            else:
                report = operations.act(action, session_id)
                self._print_status(report, as_json)
                if action == operations.Action.REVIEW and not as_json:
                    self._print_waiting_brief(report)
        except HandoffError as exc:
            raise CommandError(f"handoff {action}: {exc}") from exc

    def _export(self, username: str | None, out: str | None) -> None:
        """Write ``handoffs.json`` version 1; ``CommandError`` for an unknown user or a file
        that cannot be written."""
        owner_id = None
        if username is not None:
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                raise CommandError(gettext("No user %(username)r.") % {"username": username})
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

    def _print_waiting_brief(self, report: StatusOut) -> None:
        """Print the brief waiting for review as indented JSON, the file ``commit --brief``
        takes back once edited (a terminal session's: with its page's way to the successor
        instead); nothing when no brief waits."""
        last = report["last"]
        if last is None or not last["review_until"] or last["brief"] is None:
            return
        asks = _asks(report["session"])
        if asks is REVIEW_HERE:
            heading = gettext(
                "The brief waiting for review; to change it, save it to a file, edit it and run "
                "handoff commit %(session)s --brief FILE:"
            ) % {"session": report["session"]}
        else:  # a terminal session's brief: claimed in its terminal, not committed here
            heading = gettext("The brief waiting for review (%(asks)s):") % {"asks": asks}
        self.stdout.write(heading)
        self.stdout.write(json.dumps(last["brief"], ensure_ascii=False, indent=2))

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
                gettext("handoff deferred by %(blockers)s")
                % {"blockers": ", ".join(outcome.blockers)},
                returncode=EXIT_DEFERRED,
            )
        if outcome.record is None:
            raise CommandError(f"handoff now: {outcome.detail}", returncode=EXIT_FAILED)
        self._print_record(record_dict(outcome.record), as_json)
        self._exit_for(outcome)

    @staticmethod
    def _exit_for(outcome: AttemptOutcome) -> None:
        assert outcome.record is not None
        if outcome.outcome is Outcome.FAILED:
            raise CommandError(
                gettext("handoff failed: %(error)s") % {"error": outcome.record.error},
                returncode=EXIT_FAILED,
            )
        if outcome.outcome is Outcome.COMMITTED_START_PENDING:
            raise CommandError(
                gettext(
                    "handoff committed but the successor %(target)s did not start; open it to "
                    "continue (disable stops forwarding)"
                )
                % {"target": outcome.record.target_id},
                returncode=EXIT_START_PENDING,
            )
