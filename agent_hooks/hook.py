"""The hook command a runtime runs at each hook point: post the payload, print the answer.

    python3 -I -S <abs path>/agent_hooks/hook.py --runtime claude|codex --server URL \\
        --token-file PATH [--status-line]

Built against Claude Code 2.1 (hooks reference: https://code.claude.com/docs/en/hooks; status
line: https://code.claude.com/docs/en/statusline) and Codex CLI 0.145+
(https://developers.openai.com/codex/hooks). Standard library only, and it starts no Django:
``-I -S`` keeps the interpreter's start-up to the bare minimum, so no virtualenv is needed.

What it does (the hooks contract, docs/operations.md, "Agent runtime hooks"):

1. Reads the runtime's hook payload (one JSON object) from stdin.
2. POSTs it verbatim to ``{URL}/api/hooks/{runtime}`` with ``Authorization: Bearer <token>``
   (read from the 0600 token file), ``X-Hook-Delivery`` (a uuid4 made for this run) and
   ``X-Hook-Process`` (the runtime process that ran the hook: ``os.getppid()``, or its parent
   on Linux when that is the shell the runtime ran the command through).
3. On a 200 ``{"output": object|null, "ack": bool}``: prints ``json.dumps(output)`` on one line
   when it is an object, flushes, and only then, when ``ack`` is true, POSTs
   ``{URL}/api/hooks/{runtime}/ack`` with ``{"delivery": "<uuid>"}``: the server's evidence
   that the answer reached the runtime.

Its deadline covers the whole run, both requests: 10 s for ``SessionStart`` (the successor
waits for its brief), 1 s for every other event. The installer sets the runtime's own hook
timeout longer than that, so whatever the command prints before its deadline is read. When the
server is down, slow, answers anything but a 200 with that shape, or the token file is
missing, the command prints nothing on stdout (one short line on stderr) and exits 0 within
its deadline: the agent is never held up, and nothing undelivered is acknowledged. It never
writes the token or the prompt anywhere.

``--status-line`` (Claude Code only): reads the status line JSON from stdin, POSTs it to
``{URL}/api/hooks/claude/status-line`` and prints the answer's ``text`` (nothing when it is
empty or the server does not answer within 1 s).
"""

from __future__ import annotations

import _socket
import _thread
import json
import os
import sys
import time
from collections.abc import Callable

SESSION_START_DEADLINE = 10.0
"""Seconds the whole run may take for a ``SessionStart`` event (the successor's brief)."""
DEADLINE = 1.0
"""Seconds the whole run may take for every other event, and for the status line."""
MAX_ANSWER_BYTES = 1_000_000
"""Longest answer read from the server; a longer one counts as a bad answer."""
RUNTIMES = ("claude", "codex")
USAGE = "usage: hook.py --runtime claude|codex --server URL --token-file PATH [--status-line]"
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"})
"""Process names of the shells a runtime may run the command through (``sh -c``)."""


class BadAnswer(Exception):
    """The server's answer is not a 200 with the contract's JSON shape."""


def deadline_for(event: object) -> float:
    """Return the run's deadline in seconds for a payload's ``hook_event_name``."""
    return SESSION_START_DEADLINE if event == "SessionStart" else DEADLINE


def read_token(path: str) -> str:
    """Return the bearer token stored in ``path`` (surrounding whitespace removed).

    Raises ``OSError`` when the file cannot be read and ``ValueError`` when it is empty.
    """
    with open(path, encoding="utf-8") as handle:
        token = handle.read().strip()
    if not token:
        raise ValueError("the token file is empty")
    return token


def runtime_process() -> int:
    """Return the id of the runtime process that ran this hook: the parent process, or on
    Linux the parent's parent when the parent is a shell the runtime ran the command through
    (a shell that ``exec``s its last command leaves the runtime itself as the parent)."""
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/comm", encoding="utf-8") as comm:
            if comm.read().strip() not in SHELLS:
                return parent
        with open(f"/proc/{parent}/stat", encoding="utf-8") as stat:
            return int(stat.read().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return parent


def new_delivery_id() -> str:
    """Return a random (version 4) UUID in its canonical text form, without ``uuid``'s import."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class Server:
    """The product's server at an ``http://host[:port][/prefix]`` URL, reached with ``token``.

    HTTP/1.1 over a plain socket, one connection per request: the server is on this machine
    (the installer refuses another), and ``http.client`` alone would triple the command's
    start-up (its imports take longer than the interpreter's own start). For the same reason
    the command uses the interpreter's built-in ``_socket`` and ``_thread`` rather than
    ``socket`` and ``threading`` (whose imports cost more than the rest of the run).
    """

    def __init__(self, url: str, token: str) -> None:
        scheme, _, rest = url.partition("://")
        authority, slash, path = rest.partition("/")
        host, port = authority, "80"
        if authority.startswith("["):
            host, _, tail = authority[1:].partition("]")
            port = tail.lstrip(":") or port
        elif ":" in authority:
            host, _, port = authority.rpartition(":")
        if scheme != "http" or not host or not port.isdigit():
            raise ValueError(f"not an http://host[:port] URL: {url}")
        self.host, self.port = host, int(port)
        self.authority = authority
        self.prefix = (slash + path).rstrip("/")
        self.token = token

    def post(self, path: str, body: bytes, headers: dict[str, str], timeout: float) -> bytes:
        """POST ``body`` to ``path`` (under the URL's own path) and return a 200/204's body.

        Raises ``BadAnswer`` on any other status, a malformed or over-long answer
        (``MAX_ANSWER_BYTES``), and ``OSError`` (timeouts included) when the exchange fails.
        """
        lines = [
            f"POST {self.prefix}{path} HTTP/1.1",
            f"Host: {self.authority}",
            f"Authorization: Bearer {self.token}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            "Connection: close",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        sock = connect(self.host, self.port, max(timeout, 0.01))
        try:
            sock.sendall(request)
            answer = receive(sock)
        finally:
            sock.close()
        return response_body(answer)


def connect(host: str, port: int, timeout: float) -> _socket.socket:
    """Return a TCP connection to ``host``:``port`` (each of its addresses tried in turn), its
    operations bounded by ``timeout`` seconds; raises ``OSError`` when none answers."""
    failure: OSError = OSError(f"no address for {host}")
    # The host as bytes: as text it would be encoded through the "idna" codec, one more import.
    for family, kind, protocol, _, address in _socket.getaddrinfo(
        host.encode("ascii"), port, 0, _socket.SOCK_STREAM
    ):
        sock = _socket.socket(family, kind, protocol)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        return sock
    raise failure


def receive(sock: _socket.socket) -> bytes:
    """Read until the server closes the connection; raises ``BadAnswer`` past the size limit."""
    chunks, size = [], 0
    while chunk := sock.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise BadAnswer("answer too long")
    return b"".join(chunks)


def response_body(answer: bytes) -> bytes:
    """Return the body of a raw HTTP/1.x 200 or 204 ``answer`` (chunked bodies decoded).

    Raises ``BadAnswer`` for another status or a malformed answer.
    """
    head, separator, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if not separator or len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise BadAnswer("not an HTTP answer")
    if parts[1] not in ("200", "204"):
        raise BadAnswer(f"HTTP {parts[1]}")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip().lower()
    if "chunked" in fields.get("transfer-encoding", ""):
        return dechunk(body)
    length = fields.get("content-length")
    if length is not None and (not length.isdigit() or len(body) < int(length)):
        raise BadAnswer("answer cut short")
    return body[: int(length)] if length is not None else body


def dechunk(body: bytes) -> bytes:
    """Decode a chunked transfer-coded ``body``; raises ``BadAnswer`` when it is malformed."""
    out: list[bytes] = []
    while True:
        size_line, separator, body = body.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError as exc:
            raise BadAnswer("malformed chunked answer") from exc
        if not separator or len(body) < size:
            raise BadAnswer("chunked answer cut short")
        if size == 0:
            return b"".join(out)
        out.append(body[:size])
        body = body[size + 2 :]


def parse_answer(body: bytes) -> tuple[dict[str, object] | None, bool]:
    """Return ``(output, ack)`` from the route's answer ``{"output": object|null, "ack": bool}``.

    Raises ``BadAnswer`` for anything else (not JSON, another shape).
    """
    try:
        answer = json.loads(body)
    except ValueError as exc:
        raise BadAnswer("the answer is not JSON") from exc
    if not isinstance(answer, dict):
        raise BadAnswer("the answer is not an object")
    output, ack = answer.get("output"), answer.get("ack", False)
    if (output is not None and not isinstance(output, dict)) or not isinstance(ack, bool):
        raise BadAnswer("the answer has another shape")
    return output, ack


def within(seconds: float, work: Callable[[], bytes]) -> bytes:
    """Run ``work`` in a thread and return its result if it ends within ``seconds``.

    Raises ``TimeoutError`` when it does not (the thread is left behind: the process exits
    without waiting for it), and re-raises whatever ``work`` raised. A thread bounds the whole
    exchange, which a socket timeout alone does not (it bounds each read, not a server
    trickling bytes).
    """
    outcome: dict[str, bytes] = {}
    errors: list[BaseException] = []
    finished = _thread.allocate_lock()
    finished.acquire()

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as exc:  # handed to the caller below
            errors.append(exc)
        finally:
            finished.release()

    _thread.start_new_thread(run, ())
    if not finished.acquire(timeout=max(seconds, 0.0)):
        raise TimeoutError(f"no answer within {seconds:.1f} s")
    if errors:
        raise errors[0]
    return outcome["result"]


def emit(line: str) -> bool:
    """Print ``line`` on stdout and flush; return whether it was written."""
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        return False
    return True


def run_hook(server: Server, runtime: str, payload: bytes, clock: Callable[[], float]) -> None:
    """Deliver one hook ``payload``, print the runtime's answer, then acknowledge it.

    Raises ``ValueError`` for a payload that is not a JSON object, ``TimeoutError`` past the
    deadline, ``BadAnswer``/``OSError`` for a failed exchange; nothing is
    printed in any of those cases.
    """
    event = json.loads(payload)
    if not isinstance(event, dict):
        raise ValueError("the payload is not a JSON object")
    end = clock() + deadline_for(event.get("hook_event_name"))
    delivery = new_delivery_id()
    headers = {"X-Hook-Delivery": delivery, "X-Hook-Process": str(runtime_process())}
    body = within(
        end - clock(),
        lambda: server.post(f"/api/hooks/{runtime}", payload, headers, end - clock()),
    )
    output, ack = parse_answer(body)
    if output is not None and not emit(json.dumps(output)):
        return
    if ack:
        receipt = json.dumps({"delivery": delivery}).encode()
        within(
            end - clock(),
            lambda: server.post(f"/api/hooks/{runtime}/ack", receipt, headers, end - clock()),
        )


def run_status_line(server: Server, payload: bytes, clock: Callable[[], float]) -> None:
    """Post the status line JSON and print the answer's ``text`` when it is a non-empty string.

    Raises as ``run_hook`` does; prints nothing then.
    """
    end = clock() + DEADLINE
    headers = {"X-Hook-Delivery": new_delivery_id(), "X-Hook-Process": str(runtime_process())}
    body = within(
        end - clock(),
        lambda: server.post("/api/hooks/claude/status-line", payload, headers, end - clock()),
    )
    try:
        text = json.loads(body).get("text")
    except (ValueError, AttributeError) as exc:
        raise BadAnswer("the answer is not a JSON object") from exc
    if isinstance(text, str) and text.strip():
        emit(text.splitlines()[0])


def arguments(argv: list[str]) -> dict[str, str]:
    """Return the options of ``argv`` as ``{"runtime", "server", "token-file", "status-line"}``.

    A hand-written parser: ``argparse`` alone would take as long as the interpreter's start.
    Raises ``ValueError`` naming what is wrong (an unknown option, a missing value or option,
    an unknown runtime).
    """
    options: dict[str, str] = {}
    values = iter(argv)
    for flag in values:
        name = flag.removeprefix("--")
        if name == "status-line":
            options[name] = "yes"
        elif name in ("runtime", "server", "token-file") and flag.startswith("--"):
            options[name] = next(values, "")
        else:
            raise ValueError(f"unknown argument {flag!r}; {USAGE}")
    missing = [f"--{n}" for n in ("runtime", "server", "token-file") if not options.get(n)]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}; {USAGE}")
    if options["runtime"] not in RUNTIMES:
        raise ValueError(f"--runtime is one of {', '.join(RUNTIMES)}")
    return options


def main(argv: list[str] | None = None) -> int:
    """Run the command; always returns 0 (a hook never fails the runtime's step).

    Every failure prints one line on stderr naming its kind, never the payload or the token.
    """
    try:
        options = arguments(sys.argv[1:] if argv is None else argv)
        payload = sys.stdin.buffer.read()
        server = Server(options["server"], read_token(options["token-file"]))
        if "status-line" in options:
            run_status_line(server, payload, time.monotonic)
        else:
            run_hook(server, options["runtime"], payload, time.monotonic)
    except Exception as exc:  # the agent must go on whatever went wrong
        return skip(f"{type(exc).__name__}: {exc}")
    return 0


def skip(reason: str) -> int:
    """Say on stderr why nothing was delivered; return the exit status 0."""
    try:  # noqa: SIM105 (contextlib's import would cost more than this whole function)
        sys.stderr.write(f"session-handoff hook: skipped ({reason})\n")
    except (OSError, ValueError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
