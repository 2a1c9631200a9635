"""Synthetic session logs of realistic shape, for measuring the importer on many messages.

Claude Code 2.x logs: a ``file-history-snapshot`` line, prompts, responses written one line per
content block (a text block, then a ``tool_use``, each line repeating the response's usage), the
``tool_result`` answering each call with the ``toolUseResult`` copy Claude Code keeps beside it,
``progress`` lines, and one automatic compaction (a ``compact_boundary`` and its summary) half
way. Codex rollouts: ``session_meta``, ``turn_context``, prompts (the model input and the
``user_message`` event), ``reasoning`` items, function calls and their outputs with the exit
code in the header, and cumulative ``token_count`` events. Tool output is a few hundred to a few
thousand characters of shell-like text. Everything is made up and deterministic (seeded).
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

# Messages the importer keeps per synthetic log (about; a log ends after a whole step).
MESSAGES_PER_LOG = 2_500
# Tool calls between two prompts.
STEPS_PER_PROMPT = 12
START = datetime(2026, 11, 2, 9, 0, 0)
WORDS = ("ledger", "entry", "export", "amount", "memo", "parse", "test", "check", "error", "build")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _output(rng: random.Random) -> str:
    lines = rng.randint(4, 60)
    return "\n".join(
        f"{_text(rng, 3)}.py:{rng.randint(1, 400)}: {_text(rng, 6)}" for _ in range(lines)
    )


def _stamp(step: int) -> str:
    return (START + timedelta(seconds=7 * step)).isoformat(timespec="milliseconds") + "Z"


def write_claude_log(path: Path, seed: int, messages: int = MESSAGES_PER_LOG) -> int:
    """Write a Claude Code 2.x log of about ``messages`` imported messages; return how many."""
    rng = random.Random(seed)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": f"/home/dev/project{seed}",
        "sessionId": session,
        "version": "2.1.42",
        "gitBranch": "main",
    }
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    written = step = 0

    def line(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines.append(
            {
                "parentUuid": parent,
                **common,
                "type": kind,
                "message": message,
                "uuid": uid,
                "timestamp": _stamp(len(lines)),
                **extra,
            }
        )
        parent = uid

    lines.append(
        {
            "type": "file-history-snapshot",
            "messageId": session,
            "snapshot": {},
            "isSnapshotUpdate": False,
        }
    )
    cache = 14_000
    while written < messages:
        if step % STEPS_PER_PROMPT == 0:
            line("user", {"role": "user", "content": _text(rng, rng.randint(10, 60))})
            written += 1
        if step == messages // 6:
            lines.append(
                {
                    **common,
                    "type": "system",
                    "subtype": "compact_boundary",
                    "compactMetadata": {"trigger": "auto", "preTokens": cache},
                    "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "timestamp": _stamp(len(lines)),
                }
            )
            line("user", {"role": "user", "content": _text(rng, 200)}, isCompactSummary=True)
            cache = 14_000
        response, tool = f"msg_{seed:04d}{step:06d}", f"toolu_{seed:04d}{step:06d}"
        cache += rng.randint(200, 2_000)
        usage = {
            "input_tokens": rng.randint(1, 9),
            "cache_creation_input_tokens": 900,
            "cache_read_input_tokens": cache,
            "output_tokens": rng.randint(50, 900),
            "service_tier": "standard",
        }
        reply = {
            "id": response,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "stop_reason": None,
            "usage": usage,
        }
        request = {"requestId": f"req_{response}"}
        line(
            "assistant", reply | {"content": [{"type": "text", "text": _text(rng, 25)}]}, **request
        )
        call = {
            "type": "tool_use",
            "id": tool,
            "name": "Bash",
            "input": {
                "command": f"pytest -q tests/test_{rng.choice(WORDS)}.py",
                "description": _text(rng, 5),
            },
        }
        line("assistant", reply | {"content": [call], "stop_reason": "tool_use"}, **request)
        lines.append(
            {
                "type": "progress",
                "data": {"type": "bash_progress", "output": "…"},
                "sessionId": session,
                "timestamp": _stamp(len(lines)),
            }
        )
        output = _output(rng)
        result = {
            "tool_use_id": tool,
            "type": "tool_result",
            "content": output,
            "is_error": rng.random() < 0.1,
        }
        line(
            "user",
            {"role": "user", "content": [result]},
            toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
        )
        written += 3
        step += 1
    _write_jsonl(path, lines)
    return written


def write_codex_rollout(path: Path, seed: int, messages: int = MESSAGES_PER_LOG) -> int:
    """Write a Codex CLI rollout of about ``messages`` imported messages; return how many."""
    rng = random.Random(seed)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    lines: list[dict[str, Any]] = []

    def line(kind: str, payload: dict[str, Any]) -> None:
        lines.append({"timestamp": _stamp(len(lines)), "type": kind, "payload": payload})

    cwd = f"/home/dev/rollout{seed}"
    line(
        "session_meta",
        {
            "id": session,
            "timestamp": _stamp(0),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.125.0",
        },
    )
    line(
        "turn_context",
        {
            "cwd": cwd,
            "approval_policy": "on-request",
            "model": "gpt-5.2-codex",
            "effort": "medium",
            "summary": "auto",
        },
    )
    given = cached = output = 0
    written = step = 0
    while written < messages:
        if step % STEPS_PER_PROMPT == 0:
            prompt = _text(rng, rng.randint(10, 60))
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                },
            )
            line("event_msg", {"type": "user_message", "message": prompt, "images": []})
            written += 1
        line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x" * 400})
        call = f"call_{seed:04d}{step:06d}"
        arguments = json.dumps({"cmd": ["bash", "-lc", f"pytest -q {rng.choice(WORDS)}"]})
        line(
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call},
        )
        code = 1 if rng.random() < 0.1 else 0
        header = f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n"
        line(
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": header + _output(rng)},
        )
        written += 2
        if step % 4 == 3:
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": _text(rng, 30)}],
                },
            )
            written += 1
        call_input = rng.randint(9_000, 40_000)
        given, cached, output = given + call_input, cached + call_input - 900, output + 300
        total = {
            "input_tokens": given,
            "cached_input_tokens": cached,
            "output_tokens": output,
            "reasoning_output_tokens": 0,
            "total_tokens": given + output,
        }
        line(
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": total, "model_context_window": 272_000},
                "rate_limits": None,
            },
        )
        step += 1
    _write_jsonl(path, lines)
    return written


def write_logs(folder: Path, messages: int) -> list[Path]:
    """Write Claude Code logs and Codex rollouts (three to one) holding ``messages`` or more
    imported messages into ``folder``; return their paths."""
    paths: list[Path] = []
    written = 0
    while written < messages:
        seed = len(paths)
        if seed % 4 == 3:
            path = folder / f"rollout-{seed:03d}.jsonl"
            written += write_codex_rollout(path, seed)
        else:
            path = folder / f"claude-{seed:03d}.jsonl"
            written += write_claude_log(path, seed)
        paths.append(path)
    return paths


def _write_jsonl(path: Path, lines: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for item in lines:
            handle.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")
