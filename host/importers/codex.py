"""Codex CLI rollouts (JSONL of ``session_meta`` / ``turn_context`` / ``response_item`` /
``event_msg`` / ``compacted`` lines) → a session.

``token_count`` events carry the cumulative ``total_token_usage``; ``cached_input_tokens`` are
part of ``input_tokens``. Each event's increase over the previous one is one model call: its
uncached input (input − cached), output and cache read (cached) are attached to the call's
latest assistant item, so the projection's sums equal the last event's totals and its context
figure is the last call's prompt (input incl. cached). ``model_context_window`` becomes the
session's context window; ``turn_context.model`` changes are logged as model selections; each
``compacted`` line counts one compaction. Prompts are the ``user_message`` events; other
user-role input (AGENTS.md, environment context) and developer messages are source ``system``.

A forked rollout (its ``session_meta`` names ``forked_from_id``) replays its parent's rollout —
the parent's ``session_meta``, prompts, items and cumulative token totals — right after its own
``session_meta``, all written when the fork was made (stamped within ``FORK_REPLAY_WINDOW`` of
its start). The replay belongs to the parent: its totals are only the baseline the fork's own
calls are measured from, and its prompts and items are not imported (the parent's rollout has
them); its ``turn_context`` still gives the fork its model and cwd.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from host.importers.errors import TranscriptError
from host.importers.lines import JsonObject, LineReader
from host.importers.render import block_text, compact_json
from host.importers.responses import ResponseLedger
from host.importers.writer import Pending, SessionWriter, new_session
from host.models import Role, Session, SourceKind
from host.usage import Usage

TOOL_CALLS = ("function_call", "custom_tool_call")
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")
# How a tool output's header states its process's exit code; the header ends at "Output:".
OUTPUT_HEADER_END = "\nOutput:"
EXIT_CODE = re.compile(r"^(?:Process exited with code|Exit code:?) (-?\d+)\s*$", re.MULTILINE)
# The largest cumulative figure a rollout may report (tokens): summed calls stay in 64 bits.
MAX_TOTAL_TOKENS = 2**62
# How long after a fork's start its replay of the parent's rollout may be stamped.
FORK_REPLAY_WINDOW = timedelta(seconds=1)


def timestamp_of(value: object) -> datetime | None:
    """Return an ISO 8601 timestamp (``…Z`` allowed) as a datetime, None when it is none."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def output_failed(output: object) -> bool | None:
    """Return whether a tool output reports failure: its exit code is not 0; None when unsaid.

    Codex states the code as ``metadata.exit_code`` (an object, or a JSON string of one), or
    in the header above the output's text as ``Process exited with code N`` /
    ``Exit code: N``. A process still running has no code yet; the program's own output is
    never read for one.
    """
    if isinstance(output, str) and output.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            output = json.loads(output)
    if isinstance(output, dict):
        metadata = output.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return code != 0 if isinstance(code, int) and not isinstance(code, bool) else None
    if isinstance(output, str):
        found = EXIT_CODE.search(output.split(OUTPUT_HEADER_END, 1)[0])
        if found:
            return int(found.group(1)) != 0
    return None


def cumulative_usage(reader: LineReader, total: JsonObject) -> Usage:
    """Map a ``total_token_usage`` object to the four buckets (tokens; no cache writes)."""
    given = reader.count(total, "input_tokens", MAX_TOTAL_TOKENS)
    cached = reader.count(total, "cached_input_tokens", MAX_TOTAL_TOKENS)
    if cached > given:
        raise reader.fail("cached_input_tokens exceed input_tokens")
    return Usage(
        uncached_input=given - cached,
        output=reader.count(total, "output_tokens", MAX_TOTAL_TOKENS),
        cache_read=cached,
    )


def usage_increase(reader: LineReader, before: Usage, after: Usage) -> Usage:
    """Return ``after − before`` per bucket; a cumulative figure that shrinks is malformed."""
    increase = Usage(
        after.uncached_input - before.uncached_input,
        after.output - before.output,
        after.cache_read - before.cache_read,
        after.cache_write - before.cache_write,
    )
    if min(increase.uncached_input, increase.output, increase.cache_read) < 0:
        raise reader.fail("token_count totals went down")
    return increase


class CodexImporter:
    """Imports one Codex rollout into one main session.

    Each call's usage carries a response id, ``<session id>@<cumulative total>`` (the totals
    only grow), so a rollout read again (``rereading``: the session it fed before it was
    replaced) counts each call once (``host.importers.responses``). A followed rollout is fed in
    parts (``feed``), ``settle`` when it goes quiet, and kept between parts as ``state()``.
    """

    def __init__(self, path: Path, owner: User, *, rereading: Session | None = None) -> None:
        self.path = path
        self.owner = owner
        self.rereading = rereading
        self.ledger = ResponseLedger(owner)
        self.writer: SessionWriter | None = None
        self.model = ""
        self._total = Usage()
        self._tool_names: dict[str, str] = {}
        # While set: the line stamps up to which a fork replays its parent (see the module doc).
        self._replay_until: datetime | None = None

    def run(self, lines: Iterable[tuple[int, JsonObject]]) -> list[Session]:
        """Import every line and return ``[main]``.

        Raises ``TranscriptError`` for a malformed line or a rollout without ``session_meta``
        first, ``AlreadyImported`` when the session exists already.
        """
        self.feed(lines)
        if self.writer is None:
            raise TranscriptError(self.path, None, "no session_meta line in this rollout")
        return [self.writer.finish(f"Imported {self.path.stem}")]

    def feed(self, lines: Iterable[tuple[int, JsonObject]]) -> None:
        """Import ``lines``; a call's items stay queued until its usage arrives.

        Raises ``TranscriptError`` for a malformed line, ``AlreadyImported`` as ``run``.
        """
        for number, line in lines:
            self._line(LineReader(self.path, number), line)

    def settle(self) -> None:
        """Append what is queued (the rollout went quiet)."""
        if self.writer is not None:
            self.writer.flush()

    def writers(self) -> list[SessionWriter]:
        """Return ``[the session's writer]`` once ``session_meta`` was read, else ``[]``."""
        return [] if self.writer is None else [self.writer]

    def state(self) -> dict[str, Any]:
        """Return what this importer holds between parts of a followed rollout, JSON-ready."""
        return {
            "writer": self.writer.state() if self.writer else None,
            "model": self.model,
            "total": asdict(self._total),
            "tool_names": self._tool_names,
            "replay_until": self._replay_until.isoformat() if self._replay_until else None,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Take up the state ``state()`` returned (the session as stored now)."""
        self.writer = SessionWriter.restore(state["writer"]) if state["writer"] else None
        self.model = state["model"]
        self._total = Usage(**state["total"])
        self._tool_names = state["tool_names"]
        self._replay_until = timestamp_of(state["replay_until"])

    def _line(self, reader: LineReader, line: JsonObject) -> None:
        payload = reader.obj(line, "payload")
        kind = line["type"]
        if kind == "session_meta":
            self._session_meta(reader, payload)
            return
        writer = self.writer
        if writer is None:
            raise reader.fail("a rollout must start with its session_meta line")
        if self._replayed(line):
            self._replay(reader, kind, payload)
            return
        if kind == "turn_context":
            if isinstance(payload.get("cwd"), str):
                writer.cwd = payload["cwd"]
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
                writer.settle()
                writer.select_model(self.model)
        elif kind == "response_item":
            self._response_item(reader, writer, payload, f"line-{reader.number}")
        elif kind == "event_msg":
            self._event(reader, writer, payload)
        elif kind == "compacted":
            writer.flush()
            writer.compaction(block_text(payload.get("message")), "auto")

    def _session_meta(self, reader: LineReader, payload: JsonObject) -> None:
        if self.writer is not None:
            return
        self.writer = new_session(
            self.owner, reader.text(payload, "id"), path=self.path, rereading=self.rereading
        )
        if isinstance(payload.get("cwd"), str):
            self.writer.cwd = payload["cwd"]
        started = timestamp_of(payload.get("timestamp"))
        if isinstance(payload.get("forked_from_id"), str) and started is not None:
            self._replay_until = started + FORK_REPLAY_WINDOW

    def _replayed(self, line: JsonObject) -> bool:
        """Return whether ``line`` is part of a fork's replay of its parent's rollout."""
        if self._replay_until is None:
            return False
        stamp = timestamp_of(line.get("timestamp"))
        if stamp is not None and stamp <= self._replay_until:
            return True
        self._replay_until = None  # the fork's own lines have begun
        return False

    def _replay(self, reader: LineReader, kind: str, payload: JsonObject) -> None:
        """Take the model, cwd and token baseline from a replayed parent line, nothing else."""
        assert self.writer is not None
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            self.model = payload["model"]
        if kind == "turn_context" and isinstance(payload.get("cwd"), str):
            self.writer.cwd = payload["cwd"]
        if kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, dict):
                self._total = cumulative_usage(reader, reader.obj(info, "total_token_usage"))

    def _response_item(
        self, reader: LineReader, writer: SessionWriter, item: JsonObject, line_id: str
    ) -> None:
        kind = reader.text(item, "type")
        if kind == "message":
            role = reader.text(item, "role")
            text = block_text(item.get("content"))
            if role == Role.ASSISTANT:
                writer.add(
                    Pending(
                        Role.ASSISTANT,
                        SourceKind.ASSISTANT,
                        text,
                        external_id=line_id,
                        model=self.model,
                    )
                )
            else:
                writer.add(
                    Pending(
                        Role.USER if role == Role.USER else Role.SYSTEM,
                        SourceKind.SYSTEM,
                        text,
                        external_id=line_id,
                    )
                )
        elif kind in TOOL_CALLS:
            call_id, name = reader.text(item, "call_id"), reader.text(item, "name")
            self._tool_names[call_id] = name
            arguments = item.get("arguments", item.get("input"))
            content = arguments if isinstance(arguments, str) else compact_json(arguments)
            writer.add(
                Pending(
                    Role.ASSISTANT,
                    SourceKind.ASSISTANT,
                    content,
                    tool_name=name,
                    external_id=call_id,
                    model=self.model,
                )
            )
        elif kind == "web_search_call":
            writer.add(
                Pending(
                    Role.ASSISTANT,
                    SourceKind.ASSISTANT,
                    compact_json(item.get("action")),
                    tool_name="web_search",
                    external_id=line_id,
                    model=self.model,
                )
            )
        elif kind in TOOL_OUTPUTS:
            call_id = reader.text(item, "call_id")
            output = item.get("output")
            content = output if isinstance(output, str) else compact_json(output)
            writer.add(
                Pending(
                    Role.TOOL,
                    SourceKind.TOOL,
                    content,
                    tool_name=self._tool_names.get(call_id, ""),
                    external_id=f"{call_id}:output",
                    tool_error=output_failed(output),
                )
            )

    def _event(self, reader: LineReader, writer: SessionWriter, event: JsonObject) -> None:
        kind = reader.text(event, "type")
        window = reader.window(event, "model_context_window")
        if window is not None:
            writer.context_window = window
        if kind == "user_message":
            writer.mark_prompt(reader.text(event, "message"), f"line-{reader.number}")
        elif kind == "token_count" and isinstance(event.get("info"), dict):
            info = event["info"]
            window = reader.window(info, "model_context_window")
            if window is not None:
                writer.context_window = window
            total = cumulative_usage(reader, reader.obj(info, "total_token_usage"))
            call = usage_increase(reader, self._total, total)
            self._total = total
            response = f"{writer.session.external_id}@{total.total}"
            if call.total and self.ledger.first_sighting(response):
                writer.attach_usage(call, self.model, response)
                writer.settle()
