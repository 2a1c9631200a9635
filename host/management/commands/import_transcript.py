"""``python manage.py import_transcript PATH... [--owner USER] [--json]``.

Imports Claude Code session logs and Codex CLI rollouts, one transaction per file. Prints one
line per imported main session (``--json``: one JSON object per line, see
``host.importers.import_report``), followed by each damaged line the import repaired or skipped
as ``path:line: reason`` (``--json``: the object's ``damaged_lines``); a file already imported is
skipped and said so (``--json``: an object ``{"path", "skipped": "already-imported",
"session"}``). A file that fails (no readable record, a record breaking its format's rules,
unreadable, any other error) is reported as ``path[:line]: reason`` and makes the command
exit non-zero after the other files were tried; nothing of a failed file is imported.

The sentences are in the active language (``LANGUAGE_CODE``); ``--json`` prints
machine keys only. A line's reason is the importer's own (English, naming the format's fields).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext

from host.demo import DEMO_USERNAME, demo_user
from host.importers import (
    AlreadyImported,
    LineNote,
    TranscriptError,
    import_report,
    import_transcript,
)

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Import Claude Code session logs and Codex CLI rollouts as sessions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="JSONL transcript")
        parser.add_argument(
            "--owner",
            default=None,
            help=f"username owning the sessions (default {DEMO_USERNAME!r}, created if missing)",
        )
        parser.add_argument(
            "--json", action="store_true", help="print one JSON object per imported main session"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Import each path; raise ``CommandError`` listing the files that failed."""
        owner = resolve_owner(options["owner"])
        failures: list[str] = []
        for path in options["paths"]:
            notes: list[LineNote] = []
            failure = self._import(path, owner, notes, options["json"])
            if failure is not None:
                failures += [failure, *(f"  {note}" for note in notes)]
        if failures:
            raise CommandError(gettext("Nothing imported from:") + "\n" + "\n".join(failures))

    def _import(self, path: Path, owner: User, notes: list[LineNote], as_json: bool) -> str | None:
        """Import one file and print its report; return why it failed (None: it did not)."""
        try:
            sessions = import_transcript(path, owner, notes)
        except AlreadyImported as skipped:
            self._skipped(skipped, as_json)
            return None
        except TranscriptError as error:
            return str(error)
        except OSError as error:
            return gettext("%(path)s: cannot read (%(error)s)") % {
                "path": path,
                "error": error.strerror or error,
            }
        except Exception as error:  # one bad file never stops the others
            logger.exception("importing %s failed", path)
            return gettext("%(path)s: import failed (%(error)s)") % {
                "path": path,
                "error": f"{type(error).__name__}: {error}",
            }
        report = import_report(sessions[0])
        report["damaged_lines"] = [str(note) for note in notes]
        self._print(report, len(sessions) - 1, as_json)
        return None

    def _skipped(self, skipped: AlreadyImported, as_json: bool) -> None:
        """Say that a file was already imported: a sentence on stderr, or with ``--json`` an
        object on stdout, ``{"path", "skipped": "already-imported", "session"}``."""
        if not as_json:
            self.stderr.write(
                gettext("Skipped %(path)s: already imported as session %(session)s.")
                % {"path": skipped.path, "session": skipped.session_id}
            )
            return
        skip = {"path": str(skipped.path), "skipped": "already-imported"}
        self.stdout.write(json.dumps(skip | {"session": str(skipped.session_id)}))

    def _print(self, report: dict[str, Any], subagents: int, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        context, cumulative = report["tokens"]["context"], report["tokens"]["cumulative"]
        usage = report["usage"]
        self.stdout.write(
            gettext(
                "Imported session %(session)s in %(workspace)s: %(messages)s messages, "
                "%(turns)s turns, %(compactions)s compactions, %(subagents)s subagents, model "
                "%(model)s; tokens context %(context)s (%(context_label)s), cumulative "
                "%(cumulative)s (%(cumulative_label)s; uncached input %(uncached_input)s, "
                "output %(output)s, cache read %(cache_read)s, cache write %(cache_write)s)"
            )
            % {
                **report,
                **usage,
                "subagents": subagents,
                "model": report["model"] or "-",
                "context": context["value"],
                "context_label": context["label"],
                "cumulative": cumulative["value"],
                "cumulative_label": cumulative["label"],
            }
        )
        for note in report["damaged_lines"]:
            self.stdout.write(f"  {note}")


def resolve_owner(username: str | None) -> User:
    """Return the named user (``CommandError`` when unknown), or the demo user (created)."""
    if username is None:
        return demo_user()
    try:
        return get_user_model()._default_manager.get_by_natural_key(username)
    except get_user_model().DoesNotExist as exc:
        raise CommandError(gettext("No user named %(username)r.") % {"username": username}) from exc
