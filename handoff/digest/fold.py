"""The structured digest of a session's log: what the brief is built from (docs/spec.md, Brief).

The log entries are ``{"role", "source_kind", "content", "tool_name", "seq", "tool_error"}``
mappings, oldest first, as the session controller's ``effective_context`` returns them; ``seq``
is the host's sequence number of the entry (an entry without one, e.g. the compaction summary,
is numbered by its 1-based position), which the brief cites as evidence ("(log #1485)", issue
16). A tool call is an assistant entry with a ``tool_name`` whose content is the call's input
(JSON, or the raw patch of a Codex ``apply_patch``); its result is the next ``tool`` entry of
the same tool, with the runtime's error flag ``tool_error`` (True failed, False succeeded,
absent or None not said).
The digest reads:

- files as they stand at the end: written or edited (Edit, MultiEdit, Write, NotebookEdit,
  apply_patch, a shell ``apply_patch``, a shell command's ``>``, ``cp``, ``sed -i``), moved
  (``mv``: under the new path), deleted (``rm``: left out), staged and committed as the log's
  ``git add`` / ``git commit`` runs show, ranked by last touch, with what was done; a call
  whose result is an error changed nothing and is left out;
- the latest todo list (Claude Code ``TodoWrite``, Codex ``update_plan``);
- commands run (Bash, Codex ``exec_command`` / ``shell`` with their ``write_stdin`` polls) with
  their outcome from the runtime's error flag (an entry's ``tool_error``) and the output: test
  summaries, linters' findings, exit codes, commits, pushes (a Claude Code ``Bash`` result
  states a non-zero exit as "Exit code N", so one without it, not flagged and not piped,
  succeeded; a piped check only by its printed text);
- the follow-ups filed since the latest request ("Discovered & filed: X-5");
- the user's answers to the agent's questions (Claude Code ``AskUserQuestion``);
- the lines that report something closed or done (to close a compaction summary's tasks);
- the user's requests (typed or relayed), the assistant's texts, the compaction summary and a
  predecessor's brief (the seed message of a successor).

Nothing here invents text: every field holds a string found in the log, cut to length.

The digest is a fold (``Digest.read``) whose state stays bounded however long the log grows, so
it can be kept and read on idle by idle (``handoff.digest.per_session``): the summary's cost
must not grow with the log. Its JSON form (``to_json`` / ``from_json``) is what is kept.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

from handoff.core.said import (
    BULLET,
    FINISHED,
    MAX_ITEMS,
    MAX_MENTIONED,
    MENTIONED_FILE,
    RULE,
    RULE_WORDS,
    TASK_ID,
    UNFINISHED,
    acknowledges,
    cited,
    clip,
    decisions_in,
    may_hold,
    sentences,
    states_rule,
    substantive,
    unique,
)

Entry = Mapping[str, Any]

EDIT_TOOLS = {"Edit": "edited", "MultiEdit": "edited", "Write": "written", "NotebookEdit": "edited"}
TODO_TOOLS = ("TodoWrite", "update_plan")
SHELL_TOOLS = ("Bash", "exec_command", "shell", "local_shell", "container.exec")
POLL_TOOLS = ("write_stdin",)
QUESTION_TOOLS = ("AskUserQuestion",)
# Lines reporting something closed or done kept for closing the summary's tasks (the latest).
MAX_CLOSING_LINES = 2_000
# Bounds of the digest: files kept (the latest touched), runs of each kind,
# tool calls waiting for their result and commands still running.
MAX_FILES = 200
MAX_RUNS = 100
MAX_PENDING = 100
# Decisions kept from the start of each source (see ``offline_brief.decisions_of``).
HEAD_ITEMS = 2 * MAX_ITEMS
# Command-line options kept as run or tested (``Digest.exercised``, the latest).
MAX_EXERCISED = 500
# A command-line option as a command or a test names it ("--json", "--dry-run").
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b")
_TEST_PATH = re.compile(r"(?:^|/)tests?/|(?:^|/)test_[^/]*$|[._-](?:test|spec)\.\w+$")
# Todo items marked completed kept (the latest).
MAX_DONE = 500
# Requests nothing answered yet kept (``Digest.unanswered``, the latest).
MAX_UNANSWERED = 3
DONE = "completed"
# Directories whose files are build output, dependencies or caches, never the work itself.
GENERATED_DIRS = frozenset(
    {
        "node_modules", "_build", "deps", "dist", "build", "target", "vendor", ".git",
        "__pycache__", ".venv", "venv", ".next", ".mypy_cache", ".pytest_cache", "coverage",
    }
)  # fmt: skip
BRIEF_HEADING = "# Handoff brief"
# Directories of the system, never the work itself (scratch files, devices, installed programs).
SYSTEM_DIRS = ("/dev/", "/proc/", "/sys/", "/usr/", "/bin/", "/sbin/", "/lib/", "/etc/", "/tmp/")

_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_PATCH_ACTIONS = {"Add": "created", "Update": "patched", "Delete": "deleted"}
_TOOL_ERROR = re.compile(r"<tool_use_error>|^\s*(Error|error):|^\s*Failed to\b")
_EXIT = re.compile(
    r"Process exited with code (\d+)|\bexit(?:ed with)? code:? (\d+)|\"exit_code\":\s*(\d+)", re.I
)
_RUNNING = re.compile(
    r"Process running with session ID (\d+)|^Command running in background with ID", re.MULTILINE
)
# Python's unittest: "Ran 22 tests in 1.031s" then "OK" or "FAILED (failures=1)".
_UNITTEST = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s+^(OK\b.*|FAILED\b.*)$", re.MULTILINE)
_ANSWERS = re.compile(r'"([^"]+)"="([^"]*)"')
_ANSWERED = "User has answered your questions:"
_TEST_SUMMARY = re.compile(
    r"^.*\b\d+ (?:tests?|examples?|doctests?|specs?)\b.*\b\d+ failures?\b.*$"
    r"|^.*\b\d+ (?:passed|failed)\b.*$"
    r"|^\s*Tests?:?\s+.*\b\d+ (?:passed|failed)\b.*$"
    r"|^.*\b(?:found no issues|no issues found)\b.*$|^All checks passed!?$"
    r"|^.*\bfound \d+ (?:errors?|issues?|problems?)\b.*$|^.*\b\d+ problems? \(.*$",
    re.MULTILINE | re.IGNORECASE,
)
_FAILED_SUMMARY = re.compile(r"\b[1-9]\d* (?:failures?|failed|errors?|issues?|problems?)\b", re.I)
# A finding as linters and type checkers print it: "path:line[:column]: message".
_FINDING = re.compile(r"^[\w./-]+:\d+(?::\d+)?: .+$", re.MULTILINE)
# A pipe (not ``||``): what is piped into the program after it tells nothing by its status.
_PIPE = re.compile(r"(?<!\|)\|(?!\|)")
_STATEMENT = re.compile(r"&&|\|\||;")
# The outcome of a run whose status a pipe hides and whose printed text does not tell it.
NOT_SHOWN = "ran, outcome not shown"
# How a failure the runtime reported (the error flag) reads when no line of the output says it.
REPORTED_FAILED = "failed (the runtime reported an error)"
_COMMIT = re.compile(r"^\[[\w./-]+ [0-9a-f]{7,40}\] .+$", re.MULTILINE)
_PUSH = re.compile(
    r"^\s+[0-9a-f]{7,40}\.\.[0-9a-f]{7,40}\s+\S+ -> \S+$|^\s*\* \[new branch\]\s+\S+ -> \S+$",
    re.MULTILINE,
)
# A command that checks or records the work (tests, builds, linters, commits, pushes), matched
# at the start of each segment of a command line (``a && b | c``).
_VERIFYING = re.compile(
    r"^(?:\w+=\S+\s+)*(?:pytest|vitest|jest|tsc|mypy|ruff|cargo|make|tox|nox|rspec|gradle|mvn"
    r"|go (?:test|build|vet)|mix (?:test|credo|compile|format)|npm (?:test|run)|pnpm|yarn"
    r"|npx (?:vitest|jest|tsc|eslint)|python3? -m (?:pytest|unittest|mypy)|\.venv/bin/\w+"
    r"|bundle exec|dotnet (?:test|build)|git (?:add|commit|push))\b",
)
_SEGMENT = re.compile(r"&&|\|\||;|\|")
# Every command line ``written_paths`` finds a file in holds one of these: a cheap first look.
_MAY_WRITE = re.compile(r">|\b(?:cp|sed)\b")
# Every command line ``file_operations`` finds something in holds one of these.
_MAY_CHANGE_FILES = re.compile(r"\b(?:mv|rm|git)\b")
# What a file's state says: moved (and from where), staged, committed (``Digest._file_operation``).
MOVED_FROM = "moved from "
STAGED = "staged"
COMMITTED = "committed"
# Actions on a file the repository already tracks (what ``git commit -a`` takes).
_CHANGES = ("edited", "patched")
_ENV_WORD = re.compile(r"^\w+=")
_REDIRECT = re.compile(r"^\d*[<>]")
_FILE_LIKE = re.compile(r"\w\.[A-Za-z]\w{0,7}$")
# Programs whose second word is a subcommand (``git push``; ``npm run build`` takes a third).
SUBCOMMAND_TOOLS = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "npx", "cargo", "go", "mix", "make", "dotnet", "bundle",
        "gradle", "mvn", "ruff", "uv", "poetry", "docker", "bd", "gh", "tox", "nox",
    }
)  # fmt: skip
# Programs whose words after the subcommand name things other than files (``git push origin
# main``, ``npm run build``): only words that look like paths are their scope.
NAMED_ARGUMENTS = frozenset(
    {"git", "npm", "pnpm", "yarn", "npx", "docker", "bd", "gh", "uv", "poetry", "bundle", "dotnet"}
)
# A line of a failed command's output that says what failed.
_ERROR_LINE = re.compile(r"^(?!exit code).*(?:\berror\b|\bFAILED\b|^fatal:).*$", re.M | re.I)
_CLOSED_NEAR = (
    r"\b(?:closed?|done|completed?|finished|fixed|resolved)\b[^\n]{{0,40}}?{id}"
    r"|{id}[^\n]{{0,15}}?\b(?:done|closed|completed?|finished)\b"
)
# A follow-up filed: "Discovered & filed: X-5 (what)", "filed X-5", "✓ Created issue: X-5".
_FILED = re.compile(
    r"(?:\bfiled\b|\bcreated issue\b)\s*(?:as\s+)?:?\s*(?P<id>[A-Za-z][\w]*-\d+\b|#\d+\b)"
    r"[^\n]{0,160}",
    re.IGNORECASE,
)
_ID_TOKEN = re.compile(r"[A-Za-z][\w-]{0,40}\.\d+\b|#\d+\b")
_CLOSED = re.compile(
    r"\b(?:closed?|done|completed|finished|fixed|resolved)\b[^\n]{0,40}?"
    r"(?P<after>[A-Za-z][\w-]{0,40}\.\d+\b|#\d+\b)"
    r"|(?P<before>[A-Za-z][\w-]{0,40}\.\d+\b|#\d+\b)[^\n]{0,15}?\b(?:done|closed|completed|finished)\b",
    re.IGNORECASE,
)
# Every report of something closed holds one of these (lower case): a cheap first look.
CLOSING_WORDS = ("close", "done", "complete", "finish", "fixed", "resolved")
_ID_HINT = re.compile(r"[.#]\d")
_SHELL_PREFIXES = (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"], ["zsh", "-lc"])


@dataclass
class FileTouch:
    """A file written or edited: its path, what was done (each action and how many times, in
    the order first done), the last entry index; ``changed`` / ``changed_seq`` the entry index
    and log entry number of the result of its last change (a write, edit or move; staging and
    committing change nothing), -1 / 0 when none was read."""

    path: str
    actions: dict[str, int]
    last: int
    changed: int = -1
    changed_seq: int = 0


@dataclass(frozen=True)
class Todo:
    """One item of a todo list or plan, with its status (pending, in_progress, completed)."""

    text: str
    status: str


class Said(str):
    """A text of the log that remembers its entry: ``seq`` (the log entry number the brief
    cites) and ``position`` (its index in the entries read). Compares as the plain text."""

    seq: int
    position: int

    def __new__(cls, text: str, seq: int = 0, position: int = 0) -> Said:
        said = super().__new__(cls, text)
        said.seq, said.position = seq, position
        return said


@dataclass(frozen=True)
class Command:
    """A command run, its outcome line and whether it succeeded (``None``: unknown); ``index``
    is the call's position, ``seq`` the log entry number of the result that tells the outcome."""

    text: str
    outcome: str
    ok: bool | None
    index: int
    seq: int = 0


def is_request(entry: Entry) -> bool:
    """Return whether ``entry`` is input a person gave: a typed or relayed user message."""
    content = entry.get("content", "").strip()
    return (
        entry.get("role") == "user"
        and entry.get("source_kind") in {"user", "relay"}
        and bool(content)
        and not content.startswith(("<", "Caveat:"))
    )


def is_test_path(path: str) -> bool:
    """Return whether ``path`` is a test file (``tests/…``, ``test_x.py``, ``x_test.go``,
    ``x.test.ts``, ``x.spec.js``)."""
    return _TEST_PATH.search(path) is not None


def is_generated_path(path: str) -> bool:
    """Return whether ``path`` lies in build output, dependencies or a cache directory."""
    return any(part in GENERATED_DIRS for part in path.split("/"))


def absolute(path: str, cwd: str) -> str:
    """Return ``path`` made absolute against ``cwd`` (unchanged when already absolute)."""
    path = path.strip()
    if path.startswith("/") or not cwd:
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def tool_input(content: str) -> dict[str, Any]:
    """Return a tool call's input as a dict: its JSON object, else ``{"input": content}``."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, ValueError):
        return {"input": content}
    return value if isinstance(value, dict) else {"input": content}


def patch_files(text: str) -> list[tuple[str, str]]:
    """Return ``(path, action)`` for every file an ``apply_patch`` text adds, updates or deletes."""
    found = [(m.group(2), _PATCH_ACTIONS[m.group(1)]) for m in _PATCH_FILE.finditer(text)]
    found += [(m.group(1), "moved here") for m in _PATCH_MOVE.finditer(text)]
    return found


def edits_of(tool: str, args: Mapping[str, Any], cwd: str) -> list[tuple[str, str]]:
    """Return ``(absolute path, action)`` for the files a tool call writes or edits."""
    if tool in EDIT_TOOLS:
        path = args.get("file_path") or args.get("notebook_path")
        if not isinstance(path, str) or not path:
            return []
        action = EDIT_TOOLS[tool]
        edits = args.get("edits")
        if isinstance(edits, list) and len(edits) > 1:
            action = f"edited ({len(edits)} changes)"
        return [(absolute(path, cwd), action)]
    text = args.get("input") if tool == "apply_patch" else None
    if not isinstance(text, str):
        command = args.get("command", args.get("cmd", ""))
        text = "\n".join(map(str, command)) if isinstance(command, list) else str(command)
    if "*** Begin Patch" not in text:
        return []
    return [(absolute(path, cwd), action) for path, action in patch_files(text)]


def todos_of(args: Mapping[str, Any]) -> list[Todo] | None:
    """Return the list a ``TodoWrite`` / ``update_plan`` call sets, or None when malformed."""
    items = args.get("todos", args.get("plan"))
    if not isinstance(items, list):
        return None
    todos = []
    for item in items:
        if isinstance(item, dict):
            text = item.get("content") or item.get("step") or ""
            if isinstance(text, str) and text.strip():
                todos.append(Todo(text.strip(), str(item.get("status", "pending"))))
    return todos


def command_text(args: Mapping[str, Any]) -> str:
    """Return the command line of a shell call (``command`` string or argv list, ``cmd``, or
    the call's raw text when its input is not JSON)."""
    command = args.get("command", args.get("cmd", args.get("input", "")))
    if isinstance(command, list):
        parts = [str(part) for part in command]
        command = " ".join(parts[2:] if parts[:2] in _SHELL_PREFIXES else parts)
    return str(command).strip()


def outcome_of(
    output: str, *, error: bool | None = None, piped: bool = False
) -> tuple[str, bool | None]:
    """Return the line that tells a command's outcome and whether it succeeded.

    Test summaries and the findings of linters and type checkers ("Found 1 error.", "All
    checks passed!"), commit and push lines say it best; else the exit code; else nothing
    (``("", None)``). ``error`` is the runtime's error flag (True: it reported failure, which
    no line of the output overrides: a hook that rejected a commit means no commit). A
    ``piped`` command's exit code and success flag are the last program's, so only its printed
    text tells a success (docs/design.md, "Verified means it passed").
    """
    unittest = _UNITTEST.search(output)
    if unittest:
        line, ok = " ".join(unittest.group(0).split()), unittest.group(2).startswith("OK")
        return _flagged(line, ok, error)
    for pattern in (_TEST_SUMMARY, _COMMIT, _PUSH):
        matches = pattern.findall(output)
        if matches:
            line = " ".join(str(matches[-1]).split())
            failed = pattern is _TEST_SUMMARY and bool(_FAILED_SUMMARY.search(line))
            if failed and _FINDING.search(output):
                line = f"{line.rstrip('.')}{_first_finding(output)}"
            return _flagged(line, not failed, error)
    exit_code = None if piped else _exit_code(output)
    if exit_code is not None:
        failure = _ERROR_LINE.search(output) if exit_code or error else None
        detail = f": {' '.join(failure.group(0).split())[:160]}" if failure else ""
        return _flagged(f"exit code {exit_code}{detail}", exit_code == 0, error)
    if error or _TOOL_ERROR.search(output):
        failure = _FINDING.search(output) or _ERROR_LINE.search(output)
        failure = failure or _TOOL_ERROR.search(output)
        line = output[failure.start() :].splitlines()[0] if failure else REPORTED_FAILED
        return " ".join(line.split())[:200], False
    return "", None


def _first_finding(output: str) -> str:
    """ ": " and the first finding a linter, type checker or test run printed (``path:line:
    message``), else "" (what failed, beside the summary that counts the findings)."""
    found = _FINDING.search(output)
    return f": {' '.join(found.group(0).split())[:160]}" if found else ""


def _flagged(line: str, ok: bool, error: bool | None) -> tuple[str, bool]:
    """``line`` and ``ok``, unless the runtime reported the run failed (``error``)."""
    if error and ok:
        return f"{line} — {REPORTED_FAILED}", False
    return line, ok


def piped(command: str) -> bool:
    """Whether ``command`` pipes the output of a check into a program that is none (``ruff
    check src | tail -3``, ``pytest 2>&1 | grep passed``): the status is that program's."""
    for statement in _STATEMENT.split(command.split("\n")[0]):
        parts = _PIPE.split(statement)
        if len(parts) > 1 and verifies(parts[0]) and not verifies(parts[-1]):
            return True
    return False


def _exit_code(output: str) -> int | None:
    """The last exit code the output reports, or None."""
    codes = [next(g for g in m.groups() if g is not None) for m in _EXIT.finditer(output)]
    return int(codes[-1]) if codes else None


def verifies(command: str) -> bool:
    """Return whether ``command`` checks or records the work (tests, builds, commits, pushes)."""
    return any(_VERIFYING.match(part.strip()) for part in _SEGMENT.split(command))


def words_of(command: str) -> list[str]:
    """Split one command segment into its words (shell quoting honoured when it parses)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _segments(command: str) -> list[list[str]]:
    """The words of each segment of a command line that checks or records the work."""
    parts = (part.strip() for part in _SEGMENT.split(command.split("\n")[0]))
    return [words_of(part) for part in parts if _VERIFYING.match(part)]


def _is_path(word: str) -> bool:
    return "/" in word or bool(_FILE_LIKE.search(word))


def _intent_of(words: list[str]) -> tuple[str, frozenset[str]]:
    """The head and scope of one segment's words (see ``intent``)."""
    words = [w for w in words if not _ENV_WORD.match(w) and not _REDIRECT.match(w)]
    if words[:2] in (["python", "-m"], ["python3", "-m"]):
        words = words[2:]
    if not words:
        return "", frozenset()
    program, rest = posixpath.basename(words[0]), words[1:]  # wherever it is installed
    if program not in SUBCOMMAND_TOOLS:
        return program, frozenset(w.rstrip("/") for w in rest if not w.startswith("-"))
    head = [program]
    while rest and len(head) < 3 and _is_word(rest[0]) and (len(head) == 1 or head[1] == "run"):
        head.append(rest.pop(0))
    targets = program not in NAMED_ARGUMENTS  # ``ruff check src``: ``src`` is a folder
    paths = (w.rstrip("/") for w in rest if not w.startswith("-") and (targets or _is_path(w)))
    return " ".join(head), frozenset(paths)


def _is_word(word: str) -> bool:
    return not word.startswith("-") and not _is_path(word)


@functools.lru_cache(maxsize=4096)
def intents(command: str) -> dict[str, frozenset[str]]:
    """Return what a command line does to what: head → scope for each of its segments that
    checks or records the work, segments of one head merged (``git add -f a && git add b``:
    ``{"git add": {"a", "b"}}``); an empty scope means the whole project."""
    merged: dict[str, frozenset[str]] = {}
    for words in _segments(command) or [words_of(command)]:
        head, scope = _intent_of(words)
        known = merged.get(head)
        whole = known is not None and not (known and scope)
        merged[head] = frozenset() if whole else (known or frozenset()) | scope
    return merged


def intent(command: str) -> tuple[str, frozenset[str]]:
    """Return the head and scope of a command line's last segment that checks or records the
    work: the program and its subcommand (``git push``, ``npm run build``) with the
    environment, redirections and a ``python -m`` prefix left out, and the paths it names (of a
    program without subcommands, every word that is no flag: ``mypy tidechart``). ``git push
    2>&1`` → ``("git push", {})``; ``.venv/bin/pytest -q tests/a.py`` → ``("pytest",
    {"tests/a.py"})``."""
    return _intent_of((_segments(command) or [words_of(command)])[-1])


def covers(later: Command, earlier: Command) -> bool:
    """Whether ``later`` does what ``earlier`` did, on the same target or more:
    the same head as ``earlier``'s last segment, with a scope (all of ``later``'s segments of
    that head) that is the whole project or holds each of the earlier paths (itself or a folder
    above it)."""
    head, earlier_scope = intent(earlier.text)
    scope = intents(later.text).get(head)
    if scope is None:
        return False
    if not scope:
        return True
    return bool(earlier_scope) and all(
        any(path == s or path.startswith(s + "/") for s in scope) for path in earlier_scope
    )


def file_operations(command: str) -> list[tuple[str, list[str]]]:
    """Return what a shell command line does to files, in order: ``("mv", [sources…,
    target])``, ``("rm", paths)`` (``rm``, ``git rm`` without ``--cached``), ``("git add",
    paths)`` (no paths: everything), ``("git commit", flags)``; operands as written (no
    globs)."""
    if not _MAY_CHANGE_FILES.search(command):
        return []
    found: list[tuple[str, list[str]]] = []
    for part in _SEGMENT.split(command.split("\n")[0]):
        words = [w for w in words_of(part.strip()) if not _ENV_WORD.match(w)]
        if words[:1] == ["git"] and len(words) > 1:
            op, rest = f"git {words[1]}", words[2:]
        elif words:
            op, rest = posixpath.basename(words[0]), words[1:]
        else:
            continue
        operands = [w for w in rest if not w.startswith("-") and not _REDIRECT.match(w)]
        if op == "git rm" and "--cached" not in rest:
            op = "rm"
        if op == "git commit":
            found.append((op, [w for w in rest if w.startswith("-")]))
        elif op in ("mv", "rm", "git add") and "*" not in "".join(operands):
            found.append((op, operands))
    return found


def lists_staged(command: str) -> bool:
    """Whether ``command`` prints the staged files (``git diff --cached --name-only``)."""
    return any(
        words[:2] == ["git", "diff"]
        and bool({"--cached", "--staged"} & set(words))
        and bool({"--name-only", "--name-status", "--stat"} & set(words))
        for words in map(words_of, _SEGMENT.split(command.split("\n")[0]))
    )


def written_paths(command: str) -> list[tuple[str, str]]:
    """Return ``(path, action)`` for the files a shell command line writes: the target of each
    ``>`` / ``>>`` redirection, of ``mv`` / ``cp`` and each file of ``sed -i`` (``iconv a >
    b.csv && mv b.csv a.csv``: ``b.csv`` and ``a.csv``); targets in ``SYSTEM_DIRS`` (``/tmp/``,
    ``/dev/null``) are left out."""
    if not _MAY_WRITE.search(command):
        return []
    found = []
    for part in _SEGMENT.split(command.split("\n")[0]):
        words = [w for w in words_of(part.strip()) if not _ENV_WORD.match(w)]
        if not words:
            continue
        program = posixpath.basename(words[0])
        for before, word in itertools.pairwise(words):
            if before in (">", ">>") or re.fullmatch(r"\d?>>?\S+", word):
                target = word if before in (">", ">>") else re.sub(r"^\d?>>?", "", word)
                found.append((target, f"written by `{program}`"))
        operands = [w for w in words[1:] if not w.startswith("-") and not _REDIRECT.match(w)]
        if program == "cp" and len(operands) >= 2:
            found.append((operands[-1], f"written by `{program}`"))
        elif program == "sed" and any(w.startswith("-i") for w in words[1:]):
            found += [(w, "edited by `sed -i`") for w in operands[1:] if _is_path(w)]
    return [(p, a) for p, a in found if _is_path(p) and not p.startswith(SYSTEM_DIRS)]


def only_stages(command: str) -> bool:
    """Whether every segment of ``command`` that checks or records the work is a ``git add``:
    staging files checks nothing (the commit that records them does), so such a run closes an
    earlier refused ``git add`` but verifies nothing (docs/design.md, Verified means it passed: a
    brief that states nothing false)."""
    return set(intents(command)) == {"git add"}


def _changed(action: str) -> bool:
    return action.startswith(_CHANGES)


def _task_name(task: str) -> str:
    return rf"(?<![\w.-]){re.escape(task)}(?![\w-]|\.\d)"


def mentions(text: str, task: str) -> bool:
    """Whether ``text`` names the task ``task`` (``E-1`` is not named by ``E-12``)."""
    return re.search(_task_name(task), text, re.IGNORECASE) is not None


def closes(line: str, task: str) -> bool:
    """Whether ``line`` reports the task ``task`` (an id such as ``E-1`` or ``spotter-gqc.6``)
    closed, done or complete ("✓ Closed E-1", "Epic E-1 complete"); another id does not."""
    pattern = _CLOSED_NEAR.format(id=_task_name(task))
    return re.search(pattern, line, re.IGNORECASE) is not None


def summary_sections(summary: str) -> dict[str, str]:
    """Parse a Claude Code compaction summary into its numbered sections, by lower-case title.

    ``"1. Primary Request and Intent:\\n   text"`` gives ``{"primary request and intent":
    "text"}``. Only the part after the ``Summary:`` line is read when there is one.
    """
    start = re.search(r"^Summary:\s*$", summary, re.MULTILINE)
    body = summary[start.end() :] if start else summary
    heads = list(re.finditer(r"^\s{0,3}(\d+)\.\s+([^\n:]{3,60}):[ \t]*", body, re.MULTILINE))
    sections: dict[str, str] = {}
    for head, after in zip(heads, [*heads[1:], None], strict=False):
        end = after.start() if after else len(body)
        sections[head.group(2).strip().lower()] = body[head.end() : end].strip()
    return sections


def section(sections: Mapping[str, str], *words: str) -> str:
    """Return the first section whose title contains one of ``words`` ("" when none)."""
    for title, text in sections.items():
        if any(word in title for word in words):
            return text
    return ""


def parse_predecessor(text: str) -> dict[str, Any]:
    """Read the goal and list sections of a rendered brief (``render_brief``'s Markdown)."""
    goal = re.search(r"^\*\*Goal:\*\*\s*(.+)$", text, re.MULTILINE)
    fields: dict[str, Any] = {"goal": goal.group(1).strip() if goal else ""}
    for match in re.finditer(r"^## (.+)\n((?:- .*\n?)+)", text, re.MULTILINE):
        items = [line[2:].strip() for line in match.group(2).splitlines() if line.startswith("- ")]
        fields[match.group(1).strip().lower().replace(" ", "_")] = items  # "next_steps"
    return fields


def _said(text: str, entry: Entry, index: int) -> Said:
    """``text`` of ``entry``, the ``index``-th entry read: numbered by its ``seq``, else by its
    1-based position."""
    return Said(text, int(entry.get("seq") or index + 1), index)


@dataclass
class Ends:
    """The ends of a list that may grow with the log: its first ``HEAD_ITEMS`` items
    (``head``), its latest ``MAX_ITEMS`` (``tail``) and whether it had more than the head
    (``more``)."""

    head: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    more: bool = False

    def add(self, items: Sequence[str]) -> None:
        """Append ``items`` (kept only at the ends)."""
        self.extend([items], lambda found: found)

    def extend(self, texts: Sequence[Any], items_of: Callable[[Any], Sequence[str]]) -> None:
        """Append the items of each of ``texts`` (``items_of``), reading only the texts the
        ends need: from the start while the head is not full, from the end until the tail is,
        so a long run of texts costs about as much as a short one."""
        memo: dict[int, Sequence[str]] = {}

        def items(i: int) -> Sequence[str]:
            if i not in memo:
                memo[i] = items_of(texts[i])
            return memo[i]

        forward = 0
        while forward < len(texts) and len(self.head) < HEAD_ITEMS and not self.more:
            self.head = [*self.head, *items(forward)]
            forward += 1
        if len(self.head) > HEAD_ITEMS:
            self.head, self.more = self.head[:HEAD_ITEMS], True
        found: list[str] = []
        back = len(texts)
        while back > 0 and len(found) < MAX_ITEMS:
            back -= 1
            found = [*items(back), *found]
        self.tail = [*self.tail, *found][-MAX_ITEMS:]
        full = len(self.head) == HEAD_ITEMS
        self.more = self.more or (full and any(memo.get(i) for i in range(forward, len(texts))))


@dataclass
class Digest:
    """What the brief is built from, kept as the log is read: every string
    is taken from the log, and every list is bounded, so a digest folded over a session's log
    idle by idle (``read``) stays small and the brief reads it in about constant time; reading
    the log in one go or in any number of parts gives the same digest.

    Position: ``count`` entries read (the next one's index), ``own`` of them not ``compacted``,
    ``seq`` the last log entry number read, ``cwd`` what relative paths join.
    Structure: ``files`` written or edited by path (at most ``MAX_FILES``, the least recently
    touched dropped); ``todos`` the latest todo list, ``done_tasks`` the items marked completed
    (the latest ``MAX_DONE``); ``runs`` the verifying commands run since the request before
    the latest (at most ``MAX_RUNS``), ``latest_runs`` each command's latest run by its text
    (at most ``MAX_RUNS``),
    ``failures`` the failed runs no later run of the same text nor a later passing run of the
    same intent closed (``covers``; at most ``MAX_RUNS``); ``summary`` the compaction summary's
    sections, ``closed_tasks`` the names of its pending tasks a line reports closed (lines read
    before it are kept in ``closing_lines`` until it comes); ``predecessor`` the seed brief's
    fields; ``closed`` the ids of the summary's pending tasks the log reports closed
    (before the summary, of its compacted entries any id); ``failed_edits``; ``staged`` the
    files staged and not committed since (a commit takes them all; each one of ``files``);
    ``deleted`` the files removed (``rm``) whose deletion no commit took yet, path → [the
    ``rm``'s log entry, 1 once a ``git add`` staged it] (at most ``MAX_FILES``), ``last_commit``
    the log entry of the latest commit; ``exercised`` the command-line options (``--json``) a
    successful command ran or a test file written or edited names (the latest
    ``MAX_EXERCISED``): what the log shows run or tested;
    ``summary_at`` the index of the compaction summary (what the log did after it closes its
    tasks, ``offline_brief.done_since``); ``followups`` the follow-ups filed since the latest
    request ("X-5 (what)", the first ``MAX_ITEMS``).
    Texts (``Said``: they know their log entry): ``requests`` the first and the latest two,
    ``first_substantive`` / ``last_substantive`` (``said.substantive``); ``answers`` the first
    ``MAX_ITEMS`` distinct answers to the agent's questions ("question → answer"),
    ``answer_count`` all of them, ``rule_answers`` the first ``MAX_ITEMS`` that state a rule;
    ``request_rules`` the first ``MAX_ITEMS`` distinct rules the requests state, cited;
    decisions cited, the ends of each source (``Ends``): ``first_decisions`` the first
    request's (read as a later direction, and as the first request), ``request_decisions`` the
    later requests', ``plan_decisions`` the plan notes', ``text_decisions`` the assistant's;
    ``last_text`` the assistant's last text and ``mentioned`` the absolute paths its texts name,
    last named first (``MAX_MENTIONED``); ``last_after`` / ``previous_last`` the last assistant
    text since the latest request and in the exchange before, ``finished_said`` whether a text
    since the latest request says the work is finished (the offline agent's acknowledgements,
    ``said.acknowledges``, are no texts of the assistant: it did no work); ``unanswered`` the
    substantive requests since the assistant's last text or tool call (the latest
    ``MAX_UNANSWERED``); ``results_failed`` whether a tool result since the latest request
    failed (``None``: none came). Unmatched tool calls wait in ``pending_calls`` (applied as
    done when the digest is read, ``result``), commands still running in ``sessions``.
    """

    cwd: str = ""
    count: int = 0
    own: int = 0
    seq: int = 0
    files: dict[str, FileTouch] = field(default_factory=dict)
    todos: list[Todo] = field(default_factory=list)
    done_tasks: list[str] = field(default_factory=list)
    runs: list[Command] = field(default_factory=list)
    latest_runs: dict[str, Command] = field(default_factory=dict)
    failures: list[Command] = field(default_factory=list)
    summary: dict[str, str] = field(default_factory=dict)
    closed_tasks: set[str] = field(default_factory=set)
    closing_lines: list[str] = field(default_factory=list)
    predecessor: dict[str, Any] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)
    failed_edits: int = 0
    staged: set[str] = field(default_factory=set)
    requests: list[Said] = field(default_factory=list)
    first_substantive: Said | None = None
    last_substantive: Said | None = None
    answers: list[Said] = field(default_factory=list)
    answer_count: int = 0
    rule_answers: list[Said] = field(default_factory=list)
    request_rules: list[str] = field(default_factory=list)
    first_decisions: tuple[Ends, Ends] = field(default_factory=lambda: (Ends(), Ends()))
    request_decisions: Ends = field(default_factory=lambda: Ends())
    plan_decisions: Ends = field(default_factory=lambda: Ends())
    text_decisions: Ends = field(default_factory=lambda: Ends())
    last_text: Said | None = None
    mentioned: list[str] = field(default_factory=list)
    last_after: Said | None = None
    previous_last: Said | None = None
    finished_said: bool = False
    results_failed: bool | None = None
    pending_calls: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    sessions: dict[str, tuple[int, str]] = field(default_factory=dict)
    answer_missing: bool = False
    summary_at: int = -1
    followups: list[Said] = field(default_factory=list)
    deleted: dict[str, list[int]] = field(default_factory=dict)
    last_commit: int = 0
    exercised: list[str] = field(default_factory=list)
    unanswered: list[Said] = field(default_factory=list)

    def read(self, entries: Sequence[Entry]) -> Digest:
        """Fold ``entries`` (the log's next entries, oldest first) into this digest; return it.

        The texts whose decisions and files only the ends of the log show are read once the
        entries are: only as far as the ends need (``Ends.extend``)."""
        self._texts: list[Said] = []
        self._requests: list[Said] = []
        self._notes: list[Said] = []
        self._after: list[Said] = []
        for entry in entries:
            self._entry(self.count, entry)
            self.count += 1
            self.own += not entry.get("compacted")
            self.seq = max(self.seq, int(entry.get("seq") or 0))
        self.text_decisions.extend(
            self._texts, functools.partial(_cited_decisions, later_request=False)
        )
        self.request_decisions.extend(
            self._requests, functools.partial(_cited_decisions, later_request=True)
        )
        self.plan_decisions.extend(
            self._notes, functools.partial(_cited_decisions, later_request=False)
        )
        self.finished_said = self.finished_said or any(map(says_finished, self._after))
        self.mentioned = mentioned_files(reversed(self._texts), self.mentioned)
        self._texts, self._requests, self._notes, self._after = [], [], [], []
        return self

    def result(self) -> Digest:
        """Return what the brief reads: a copy with the tool calls still without a result taken
        as done (the log ended) and ``answer_missing`` judged; this digest is left as it is."""
        done = copy.deepcopy(self)
        done.answer_missing = bool(
            done.requests
            and done.results_failed is False
            and not (done.pending_calls or done.last_after)
        )
        for call in done.pending_calls:
            done._apply(*call, output=Said(""))
        done.pending_calls = []
        return done

    def ranked_files(self) -> list[FileTouch]:
        """The files written or edited, last touched first."""
        return sorted(self.files.values(), key=lambda t: t.last, reverse=True)

    def to_json(self) -> dict[str, Any]:
        """This digest as JSON-ready data (``from_json`` reads it back)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["files"] = [
            [t.path, list(t.actions.items()), t.last, t.changed, t.changed_seq]
            for t in self.files.values()
        ]
        data["todos"] = [[t.text, t.status] for t in self.todos]
        for name in ("runs", "failures"):
            data[name] = [list(astuple(c)) for c in data[name]]
        data["latest_runs"] = [list(astuple(c)) for c in self.latest_runs.values()]
        for name in ("closed_tasks", "closed", "staged"):
            data[name] = sorted(data[name])
        for name in _SAID_LISTS:
            data[name] = [_said_json(s) for s in data[name]]
        for name in _SAID_FIELDS:
            data[name] = _said_json(data[name]) if data[name] is not None else None
        data["first_decisions"] = [list(astuple(part)) for part in self.first_decisions]
        for name in _ENDS:
            data[name] = list(astuple(data[name]))
        data["sessions"] = {k: list(v) for k, v in self.sessions.items()}
        data["pending_calls"] = [list(call) for call in self.pending_calls]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Digest:
        """Read back what ``to_json`` wrote; ``KeyError`` / ``TypeError`` / ``ValueError`` when
        ``data`` is not such a digest."""
        d = cls(**{name: data[name] for name in cls.__dataclass_fields__})
        d.files = {p: FileTouch(p, dict(actions), *rest) for p, actions, *rest in data["files"]}
        d.todos = [Todo(*t) for t in data["todos"]]
        d.runs = [Command(*c) for c in data["runs"]]
        d.failures = [Command(*c) for c in data["failures"]]
        d.latest_runs = {c[0]: Command(*c) for c in data["latest_runs"]}
        for name in ("closed_tasks", "closed", "staged"):
            setattr(d, name, set(data[name]))
        for name in _SAID_LISTS:
            setattr(d, name, [Said(*s) for s in data[name]])
        for name in _SAID_FIELDS:
            setattr(d, name, Said(*data[name]) if data[name] is not None else None)
        later, first = data["first_decisions"]
        d.first_decisions = (Ends(*later), Ends(*first))
        for name in _ENDS:
            setattr(d, name, Ends(*data[name]))
        d.sessions = {k: (v[0], v[1]) for k, v in data["sessions"].items()}
        d.pending_calls = [(i, tool, args) for i, tool, args in data["pending_calls"]]
        return d

    def _entry(self, index: int, entry: Entry) -> None:
        role, kind = entry.get("role", ""), entry.get("source_kind", "")
        content: str = entry.get("content", "")
        if kind == "compaction":
            self._summary(summary_sections(content), index)
        elif kind == "plugin" and content.lstrip().startswith(BRIEF_HEADING):
            self.predecessor = parse_predecessor(content)
        elif role == "assistant" and entry.get("tool_name"):
            self._call(index, entry["tool_name"], tool_input(content), entry)
        elif role == "tool" and entry.get("compacted"):  # before the summary: files only
            self._closing(content, entry)
            said, error = _said(content, entry, index), entry.get("tool_error")
            self._result(entry.get("tool_name", ""), said, error, files_only=True)
        elif role == "tool":
            error = entry.get("tool_error")
            failed = self.results_failed or outcome_of(content, error=error)[1] is False
            self.results_failed = failed
            self._closing(content, entry)
            self._filed(_said(content, entry, index))
            self._result(entry.get("tool_name", ""), _said(content, entry, index), error)
        elif role == "assistant" and content.strip() and not acknowledges(content):
            self._closing(content, entry)
            self._filed(_said(content.strip(), entry, index))
            self._text(_said(content.strip(), entry, index))
        elif is_request(entry):
            self._request(_said(content.strip(), entry, index))

    def _filed(self, text: Said) -> None:
        """Note the follow-ups ``text`` reports filed ("Discovered & filed: X-5 (…)", "✓
        Created issue: X-5"), one per id (its longest report), the first ``MAX_ITEMS`` since
        the latest request."""
        low = text.lower()
        if "filed" not in low and "created issue" not in low:
            return
        for found in _FILED.finditer(text):
            rest = found.group(0)[found.end("id") - found.start() :].rstrip(" .")
            said = Said(" ".join(f"{found.group('id')}{rest}".split()), text.seq, text.position)
            same = [f for f in self.followups if _filed_id(f) == found.group("id")]
            if same and len(same[0]) < len(said):
                self.followups = [said if f is same[0] else f for f in self.followups]
            elif not same and len(self.followups) < MAX_ITEMS:
                self.followups = [*self.followups, said]

    def _text(self, text: Said) -> None:
        self.last_after = self.last_text = text
        self._after.append(text)
        self._texts.append(text)
        self.unanswered = []

    def _request(self, request: Said) -> None:
        if not self.requests:
            self.first_decisions[0].add(_cited_decisions(request, True))
            self.first_decisions[1].add(_cited_decisions(request, False))
        else:
            self._requests.append(request)
        self.requests = [*self.requests[:1], *self.requests[1:][-1:], request]
        if substantive(request):
            self.first_substantive = self.first_substantive or request
            self.last_substantive = request
            self.unanswered = [*self.unanswered, request][-MAX_UNANSWERED:]
        if len(self.request_rules) < MAX_ITEMS and may_hold(RULE_WORDS, request):
            rules = [cited(s, request.seq) for s in sentences(request) if states_rule(s)]
            self.request_rules = unique([*self.request_rules, *rules])
        begun = self.requests[-2].position if len(self.requests) > 1 else -1
        self.runs = [c for c in self.runs if c.index > begun]
        self.previous_last, self.last_after = self.last_after, None
        self.finished_said = False
        self.followups = []
        self._after = []
        self.results_failed = None

    def _summary(self, sections: dict[str, str], index: int) -> None:
        self.summary, self.summary_at = sections, index
        self.closed &= pending_task_ids(sections)
        lines, self.closing_lines = self.closing_lines, []
        self._close_tasks(lines)

    def _close_tasks(self, lines: Sequence[str]) -> None:
        """Note the summary's pending tasks that ``lines`` report closed (kept for the summary
        still to come while none was read, the latest ``MAX_CLOSING_LINES``)."""
        if not self.summary:
            self.closing_lines = [*self.closing_lines, *lines][-MAX_CLOSING_LINES:]
            return
        for name in pending_task_names(self.summary):
            if name not in self.closed_tasks and any(closes(line, name) for line in lines):
                self.closed_tasks.add(name)

    def _closing(self, text: str, entry: Entry) -> None:
        """Note the task ids and summary tasks ``text`` reports closed or done; before the
        compaction summary only its compacted entries can come, so later lines wait for none."""
        if not (self.summary or entry.get("compacted")):
            return
        closed = closed_ids(text)
        if closed:
            self.closed |= closed & pending_task_ids(self.summary) if self.summary else closed
        if reports_closing(text):
            self._close_tasks([line for line in text.splitlines() if reports_closing(line)])

    def _call(self, index: int, tool: str, args: dict[str, Any], entry: Entry) -> None:
        self.unanswered = []
        if tool in TODO_TOOLS:
            todos = todos_of(args)
            if todos is not None:
                self.todos = todos
                done = [t.text for t in todos if t.status == DONE]
                kept = [t for t in self.done_tasks if t not in done]
                self.done_tasks = list(dict.fromkeys([*kept, *done]))[-MAX_DONE:]
            note = args.get("explanation")
            if isinstance(note, str) and note.strip():
                self._notes.append(_said(note.strip(), entry, index))
            return
        self.pending_calls = [*self.pending_calls, (index, tool, args)][-MAX_PENDING:]

    def _result(
        self, tool: str, output: Said, error: bool | None, files_only: bool = False
    ) -> None:
        call = next((c for c in self.pending_calls if c[1] == tool or not tool), None)
        if call is None:
            return
        self.pending_calls.remove(call)
        self._apply(*call, output=output, error=error, files_only=files_only)

    def _apply(
        self,
        index: int,
        tool: str,
        args: dict[str, Any],
        *,
        output: Said,
        error: bool | None = None,
        files_only: bool = False,
    ) -> None:
        """Fold in a tool call's result: ``output`` and the runtime's error flag ``error``
        (True failed, False succeeded, None not said); ``files_only`` (a call the compaction
        summarized) changes the files as they stand and records no run."""
        edits = edits_of(tool, args, self.cwd)
        if edits:
            if error or _TOOL_ERROR.search(output):
                self.failed_edits += 1
                return
            for path, action in edits:
                self._touch(path, action, index, output.seq)
            if any(map(is_test_path, (path for path, _ in edits))):
                self._exercise(json.dumps(args))
        elif tool in SHELL_TOOLS:
            self._command(index, tool, command_text(args), output, error, files_only)
        elif tool in POLL_TOOLS:
            self._poll(str(args.get("session_id", "")), output)
        elif tool in QUESTION_TOOLS or output.startswith(_ANSWERED):
            for question, answer in _ANSWERS.findall(output):
                self._answer(Said(f"{question} → {answer}", output.seq, output.position))

    def _answer(self, answer: Said) -> None:
        self.answer_count += 1
        self.answers = _first_distinct(self.answers, answer)
        if RULE.search(answer.split(" → ", 1)[-1]):
            self.rule_answers = _first_distinct(self.rule_answers, answer)

    def _exercise(self, text: str) -> None:
        """Note the command-line options ``text`` names as run or tested (``exercised``)."""
        found = set(OPTION.findall(text))
        if found:
            kept = [o for o in self.exercised if o not in found]
            self.exercised = [*kept, *sorted(found)][-MAX_EXERCISED:]

    def _touch(self, path: str, action: str, index: int, seq: int = 0) -> None:
        """Note ``action`` on ``path`` at the ``index``-th entry (``seq``: the log entry of the
        result that shows it)."""
        if is_generated_path(path):
            return
        touch = self.files.setdefault(path, FileTouch(path, {}, index))
        if action not in (STAGED, COMMITTED):  # changed since it was staged or committed
            touch.actions.pop(STAGED, None)
            touch.actions.pop(COMMITTED, None)
            self.staged.discard(path)
            self.deleted.pop(path, None)  # written again
            touch.changed, touch.changed_seq = index, seq
        touch.actions[action] = touch.actions.get(action, 0) + 1
        touch.last = index
        if len(self.files) > MAX_FILES:
            oldest = min(self.files.values(), key=lambda t: t.last).path
            del self.files[oldest]
            self.staged.discard(oldest)

    def _command(
        self,
        index: int,
        tool: str,
        text: str,
        output: Said,
        error: bool | None,
        files_only: bool = False,
    ) -> None:
        running = _RUNNING.search(output)
        if running and _exit_code(output) is None:
            if files_only:  # its end is not in the context
                return
            if running.group(1):
                self.sessions[running.group(1)] = (index, text)
                while len(self.sessions) > MAX_PENDING:
                    del self.sessions[next(iter(self.sessions))]
            return
        self._record(index, text, output, error, claude_bash=tool == "Bash", files_only=files_only)

    def _poll(self, session_id: str, output: Said) -> None:
        started = self.sessions.get(session_id)
        if started is None:
            return
        index, text = started
        if outcome_of(output, piped=piped(text))[1] is not None:
            del self.sessions[session_id]
            self._record(index, text, output, None)

    def _record(
        self,
        index: int,
        text: str,
        output: Said,
        error: bool | None,
        *,
        claude_bash: bool = False,
        files_only: bool = False,
    ) -> None:
        """Record a command's run: its outcome from the output and the runtime's flag
        (``outcome_of``); a Claude Code ``Bash`` result states any non-zero exit ("Exit code
        N"), so one without it, not flagged and not piped succeeded, as does a run the runtime
        flags as a success; a piped check whose text does not tell is ``NOT_SHOWN``. A
        successful run changes the files as they stand; ``files_only`` records no run."""
        pipe = piped(text)
        outcome, ok = outcome_of(output, error=error, piped=pipe)
        if ok is None and output.seq and not pipe and (claude_bash or error is False):
            outcome, ok = "exit code 0", True
        if ok:
            self._exercise(text)
            for path, action in written_paths(text):
                self._touch(absolute(path, self.cwd), action, index, output.seq)
            listing = output if lists_staged(text) else None
            for op, operands in file_operations(text):
                if op != "git commit":  # its operands are flags
                    operands = [absolute(o, self.cwd) for o in operands]
                self._file_operation(op, operands, listing, index, output.seq)
        if (
            files_only
            or not text
            or not verifies(text)
            or (ok is None and not (pipe and output.seq))
        ):
            return
        self._run(Command(text, outcome or NOT_SHOWN, ok, index, output.seq))

    def _file_operation(
        self, op: str, operands: list[str], listing: str | None, index: int, seq: int
    ) -> None:
        """Apply one file operation of a successful command to the files as they stand
        (``listing``: the command's output when it lists the staged files, else None; ``seq``:
        the log entry of the command's result)."""
        if op == "mv" and len(operands) >= 2:
            for source in operands[:-1]:
                self._move(source, operands[-1], index, seq)
        elif op == "rm":
            for path in operands:
                self._drop(path, seq)
        elif op == "git add":
            self._stage(operands, listing, index)
        elif op == "git commit":
            self._commit(operands, index, seq)

    def _move(self, source: str, target: str, index: int, seq: int) -> None:
        """``mv source target``: the file stands under its new path ("moved from …"); moved
        back where it came from, it is as before the move."""
        if not _FILE_LIKE.search(target) and _FILE_LIKE.search(source):
            target = posixpath.join(target, posixpath.basename(source))  # into a folder
        touch = self.files.pop(source, None)
        actions = dict(touch.actions) if touch else {}
        origin = next((a for a in actions if a.startswith(MOVED_FROM)), f"{MOVED_FROM}{source}")
        actions.pop(origin, None)
        if origin != f"{MOVED_FROM}{target}":
            actions[origin] = 1
        self.staged.discard(source)
        self.deleted.pop(target, None)
        if not is_generated_path(target):
            self.files[target] = FileTouch(target, actions, index, index, seq)

    def _drop(self, path: str, seq: int) -> None:
        """``rm path`` (``seq``: its result's log entry): the file (or every file under the
        folder) no longer stands; its deletion is a change of its own, unstaged until a ``git
        add`` takes it (``deleted``)."""
        known = [p for p in self.files if p == path or p.startswith(path + "/")]
        for gone in known:
            del self.files[gone]
            self.staged.discard(gone)
        for gone in known or ([path] if _FILE_LIKE.search(path) else []):
            self.deleted.pop(gone, None)
            self.deleted[gone] = [seq, 0]
        while len(self.deleted) > MAX_FILES:
            del self.deleted[next(iter(self.deleted))]

    def _stage(self, operands: list[str], listing: str | None, index: int) -> None:
        """``git add``: the paths it names, the files touched under a folder it names, or
        every file touched (``.``, ``-A`` without paths) are staged; with a ``git diff
        --cached`` listing after it, only those the listing names (none when it is empty)."""
        root = {self.cwd.rstrip("/") or "/", absolute(".", self.cwd)}
        everything = not operands or any(o in root for o in operands)
        named = [o for o in operands if o not in root and "*" not in o]
        paths = [p for p in self.files if everything or any(p.startswith(f"{o}/") for o in named)]
        paths += [o for o in named if _FILE_LIKE.search(o)]
        if listing is not None:
            paths = [p for p in paths if posixpath.basename(p) in listing]
        for path in dict.fromkeys(paths):
            self._touch(path, STAGED, index)
            self.staged.add(path)
        for path, state in self.deleted.items():
            if everything or any(path == o or path.startswith(f"{o}/") for o in named):
                state[1] = 1

    def _commit(self, flags: list[str], index: int, seq: int) -> None:
        """``git commit`` (``seq``: its result's log entry): everything staged before it is
        committed, deletions too; with ``-a`` also every file the log edited or deleted."""
        paths = set(self.staged)
        every = any(f in ("-a", "--all") or (f.startswith("-a") and f[1:].isalpha()) for f in flags)
        if every:
            paths |= {p for p, t in self.files.items() if any(map(_changed, t.actions))}
        self.deleted = {p: s for p, s in self.deleted.items() if not (every or s[1])}
        self.last_commit = seq
        for path in sorted(paths):
            touch = self.files.get(path)
            if touch is not None:
                touch.actions.pop(STAGED, None)
            self._touch(path, COMMITTED, index)
        self.staged = set()

    def _run(self, run: Command) -> None:
        self.runs = [*self.runs, run][-MAX_RUNS:]
        self.latest_runs.pop(run.text, None)
        self.latest_runs[run.text] = run
        while len(self.latest_runs) > MAX_RUNS:
            del self.latest_runs[next(iter(self.latest_runs))]
        if run.ok is None:  # a run whose outcome is not shown closes nothing
            return
        self.failures = [
            c for c in self.failures if c.text != run.text and not (run.ok and covers(run, c))
        ]
        if run.ok is False:
            self.failures = [*self.failures, run][-MAX_RUNS:]


_ENDS = ("request_decisions", "plan_decisions", "text_decisions")
_SAID_LISTS = ("requests", "answers", "rule_answers", "followups", "unanswered")
_SAID_FIELDS = ("first_substantive", "last_substantive", "last_text", "last_after", "previous_last")


def _filed_id(followup: str) -> str:
    """The id a follow-up (as ``Digest._filed`` keeps it: the id first) names."""
    return followup.split(" ", 1)[0]


def _said_json(said: Said) -> list[Any]:
    return [str(said), said.seq, said.position]


def _first_distinct(items: list[Said], item: Said) -> list[Said]:
    """``items`` and ``item`` unless it repeats one (as cited, clipped) or ``MAX_ITEMS`` are
    there."""
    shown = {clip(cited(i, i.seq)) for i in items}
    if len(items) >= MAX_ITEMS or clip(cited(item, item.seq)) in shown:
        return items
    return [*items, item]


def pending_task_ids(summary: Mapping[str, str]) -> set[str]:
    """The task ids the compaction summary's pending tasks name (``task_ids``)."""
    return {i for task in BULLET.findall(section(summary, "pending")) for i in task_ids(task)}


def pending_task_names(summary: Mapping[str, str]) -> list[str]:
    """The names of the compaction summary's pending tasks that open with one ("E-1 (EPIC):
    …" → ``E-1``)."""
    tasks = BULLET.findall(section(summary, "pending"))
    return [named.group(1) for named in map(TASK_ID.match, tasks) if named]


def mentioned_files(texts: Iterable[str], known: Sequence[str]) -> list[str]:
    """The absolute paths ``texts`` (latest first) name, last named first, then ``known``
    (named before them): the first ``MAX_MENTIONED`` distinct, no system or build paths;
    ``texts`` is read only until enough are found."""
    found: dict[str, None] = {}
    for text in texts:
        named = reversed(MENTIONED_FILE.findall(text)) if "/" in text else ()
        for path in named:
            if not path.startswith(SYSTEM_DIRS) and not is_generated_path(path):
                found.setdefault(path)
        if len(found) >= MAX_MENTIONED:
            break
    return list(dict.fromkeys([*found, *known]))[:MAX_MENTIONED]


def says_finished(text: str) -> bool:
    """Whether a sentence of ``text`` reports the work finished ("not done", "once done" do
    not count)."""
    return any(FINISHED.search(s) and not UNFINISHED.search(s) for s in sentences(text))


def _cited_decisions(text: Said, later_request: bool) -> list[str]:
    return [cited(s, text.seq) for s in decisions_in(text, later_request)]


def digest(entries: Sequence[Entry], *, cwd: str = "") -> Digest:
    """Return the structured digest of ``entries`` (oldest first) as the brief reads it
    (``Digest.result``); relative paths join ``cwd``."""
    return Digest(cwd=cwd).read(entries).result()


def task_ids(text: str) -> set[str]:
    """Return the task identifiers in ``text`` (``spotter-gqc.6`` → ``gqc.6``, ``#12``).

    An identifier is compared by its last ``-`` part, so ``gqc.6`` and ``spotter-gqc.6`` match.
    """
    return {_short_id(m.group(0)) for m in _ID_TOKEN.finditer(text)}


def reports_closing(text: str) -> bool:
    """Whether ``text`` holds a word of something closed or done (``CLOSING_WORDS``)."""
    low = text.lower()
    return any(word in low for word in CLOSING_WORDS)


def closed_ids(text: str) -> set[str]:
    """Return the task identifiers that ``text`` reports closed or done ("Closed gqc.6")."""
    # Every match holds one of the words and an id (``x.6`` or ``#6``): two cheap first looks.
    if not reports_closing(text) or not _ID_HINT.search(text):
        return set()
    return {_short_id(m.group("after") or m.group("before")) for m in _CLOSED.finditer(text)}


def _short_id(token: str) -> str:
    return token.lower().rsplit("-", 1)[-1]
