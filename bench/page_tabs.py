"""The page mode's tabs, played in client processes of their own (``bench/follower_pages.py``).

A browser runs its tabs beside the server, not in one Python process with all the others: 200
tabs in one asyncio process receive their frames one after another, and that process's garbage
collection (of the Django it loaded to set the run up) stops all of them at once, for 80–200 ms
at 200 tabs. So the page mode spreads its tabs over a few client processes (``clients``, run as
``python -m bench.page_tabs``), which import no Django model and freeze what they imported
before the first tab (``gc.freeze``). Each process reads commands from stdin and answers on
stdout, one JSON object a line (tab ``i`` of a round goes to process ``i`` modulo their
count, ``Clients``):

- ``{"open": <source id>, "tabs": [[cookie, loads], …], "loading": n}``: load the source's page
  for each tab (``n`` at once), open their sockets one at a time (as a person does) and start
  following; answers ``{"ready": true}``;
- ``{"wait": <seconds>}``: wait at most that long for the tabs to open the successor; answers
  ``{"tabs": [[moment or null, requests, error or null], …]}`` in the order the tabs came;
- ``{"drain": true}``: wait for the successor pages still loading; answers ``{"drained":
  [seconds, …]}``, each page's time from the tab's decision to open it until it came whole.

The process ends at the end of its stdin.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import sys
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from websockets.asyncio.client import ClientConnection, connect

from common.caching import FOLLOWED

GROUP = re.compile(r'class="session-group" data-workspace="([^"]*)"')
ROW_GROUP = re.compile(r'data-workspace="([^"]*)" data-shown="(true|false)"')
RENDERED = re.compile(r'data-event-id="(\d+)"')
T = TypeVar("T")


@dataclass(eq=False)
class Endpoint:
    """A Daphne worker on loopback as a browser reaches it: its port and ``Origin``, the user
    whose follower sockets it opens (``user_id``) and a sign-in (``cookie``, ``sessionid=…``)
    used when a request names none."""

    port: int
    origin: str
    user_id: int
    cookie: str

    async def open_tab(
        self, rendered_id: int, cookie: str | None = None, path: str = "/ws/follow/"
    ) -> ClientConnection:
        """Open a follower socket at ``path`` as a page rendered at ``rendered_id`` in the
        browser signed in with ``cookie`` (default: ``self.cookie``); return after ``ready``."""
        return await self.open_socket(f"{path}?user={self.user_id}", rendered_id, cookie)

    async def open_socket(
        self, path: str, hello: int | None = None, cookie: str | None = None
    ) -> ClientConnection:
        """Open a websocket at ``path`` (query included) with the site's ``Origin`` and
        ``cookie`` (default: ``self.cookie``), send ``hello`` with ``hello`` as the rendered id
        unless it is None, and return after the server's ``ready`` frame."""
        socket_ = await connect(
            f"ws://127.0.0.1:{self.port}{path}",
            origin=self.origin,  # type: ignore[arg-type]
            additional_headers={"Cookie": cookie or self.cookie},
            compression=None,
            open_timeout=60,
        )
        if hello is not None:
            await socket_.send(json.dumps({"type": "hello", "last_event_id": hello}))
        while json.loads(await socket_.recv())["type"] != "ready":
            pass
        return socket_

    async def get(self, path: str, cookie: str | None = None) -> bytes:
        """GET ``path`` with ``cookie`` (default: ``self.cookie``; HTTP/1.1, one connection);
        return the body."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        request = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Cookie: {cookie or self.cookie}\r\n"
            "Accept: application/json\r\nConnection: close\r\n\r\n"
        )
        writer.write(request.encode())
        await writer.drain()
        response = await reader.read()
        writer.close()
        return response.partition(b"\r\n\r\n")[2]


@dataclass
class PageTab:
    """One tab on the source's page: its list's groups, the requests it sent, its browser's
    sign-in (``cookie``; None: the endpoint's own) and whether it fetches the successor's page
    itself (``loads``: not when another tab of its browser brings the shared render)."""

    source: str
    rendered: int
    groups: set[str]
    cookie: str | None
    loads: bool
    requests: int = 0
    waiting: str | None = None

    async def refetch(self, site: Endpoint, *paths: str) -> None:
        """Fetch what the page would (the list; after a resync the log and the panel too)."""
        for path in paths:
            body = (await site.get(path, self.cookie)).decode()
            self.requests += 1
            self.groups |= set(GROUP.findall(body))

    async def follow(
        self, site: Endpoint, socket: ClientConnection, loading: set[asyncio.Task[float]]
    ) -> float:
        """Apply events as the page does until it opens the successor; return that moment
        (epoch seconds). The successor's page it then fetches (``loads``) is added to
        ``loading`` (``fetched``: its seconds from then until the whole page came)."""
        try:
            while True:
                frame = json.loads(await socket.recv())
                if frame["type"] == "resync":
                    await self.refetch(
                        site,
                        f"/sidebar/?current={self.source}",
                        f"/s/{self.source}/messages/",
                        f"/handoff/sessions/{self.source}/panel/",
                    )
                if frame["type"] == "event" and await self.apply(site, frame):
                    moment = time.time()
                    if self.loads:
                        page = f"/s/{self.waiting}/?{FOLLOWED}=1"
                        loading.add(asyncio.create_task(fetched(site, page, self.cookie)))
                    return moment
        finally:
            await socket.close()

    async def apply(self, site: Endpoint, frame: dict[str, object]) -> bool:
        """Apply one event; True when the page opens the successor now."""
        kind, payload = frame["kind"], frame["payload"]
        assert isinstance(payload, dict)
        placed = ROW_GROUP.search(str(payload.get("row_html", "")))
        if placed and placed.group(2) == "true" and placed.group(1) not in self.groups:
            await self.refetch(site, f"/sidebar/?current={self.source}")
        if kind == "redirect.committed" and payload["source"] == self.source:
            self.waiting = str(payload["destination"])
        elif kind not in ("session.updated", "session.added"):
            return False
        row = payload["session"]
        return bool(self.waiting and row["id"] == self.waiting and not row["blank"])


async def fetched(site: Endpoint, path: str, cookie: str | None) -> float:
    """GET ``path`` as ``cookie``'s browser (``Endpoint.get``); return the seconds it took."""
    start = time.time()
    await site.get(path, cookie)
    return time.time() - start


async def page_tab(
    site: Endpoint, source: str, loading: asyncio.Semaphore, cookie: str | None, loads: bool
) -> PageTab:
    """Load the source's page as a tab of the browser signed in with ``cookie`` does; return
    the tab it rendered. Raises ``RuntimeError`` when the page embeds no event id."""
    async with loading:
        html = (await site.get(f"/s/{source}/", cookie)).decode()
    rendered = RENDERED.search(html)
    if rendered is None:
        raise RuntimeError(f"the page of {source} has no rendered event id")
    return PageTab(source, int(rendered.group(1)), set(GROUP.findall(html)), cookie, loads)


class Player:
    """The tabs of one client process and the successor pages they are fetching."""

    def __init__(self, site: Endpoint) -> None:
        self.site = site
        self.watching: list[tuple[PageTab, asyncio.Task[float]]] = []
        self.loading: set[asyncio.Task[float]] = set()

    async def open(self, source: str, tabs: list[list[Any]], at_once: int) -> None:
        """Load the source's page for each ``[cookie, loads]`` of ``tabs`` (``at_once`` at a
        time), open their sockets one after another and start following."""
        loading = asyncio.Semaphore(at_once)
        pages = await asyncio.gather(
            *(page_tab(self.site, source, loading, cookie, loads) for cookie, loads in tabs)
        )
        self.watching = []
        for page in pages:  # one at a time, as tabs opened by a person
            socket = await self.site.open_tab(page.rendered, page.cookie)
            task = asyncio.create_task(page.follow(self.site, socket, self.loading))
            self.watching.append((page, task))

    async def wait(self, patience: float) -> list[list[Any]]:
        """Wait at most ``patience`` seconds for the tabs; return ``[moment or None, requests,
        error or None]`` per tab, in the order they were opened (a late tab: no moment)."""
        tasks = [task for _, task in self.watching]
        if tasks:
            await asyncio.wait(tasks, timeout=patience)
        results: list[list[Any]] = []
        for page, task in self.watching:
            if not task.done():
                task.cancel()
                results.append([None, page.requests, None])
            elif task.exception() is not None:
                results.append([None, page.requests, repr(task.exception())])
            else:
                results.append([task.result(), page.requests, None])
        self.watching = []
        return results

    async def drain(self) -> list[float]:
        """Wait for the successor pages still loading; return the seconds each took (from the
        tab's decision to open it until the whole page came)."""
        seconds = await asyncio.gather(*self.loading)
        self.loading.clear()
        return list(seconds)

    async def answer(self, command: dict[str, Any]) -> dict[str, Any]:
        """Carry out one command of the module docstring's; return its answer."""
        if "open" in command:
            await self.open(str(command["open"]), command["tabs"], int(command["loading"]))
            return {"ready": True}
        if "wait" in command:
            return {"tabs": await self.wait(float(command["wait"]))}
        if "drain" in command:
            return {"drained": await self.drain()}
        raise ValueError(f"unknown command: {command!r}")


async def serve(site: Endpoint) -> None:
    """Answer the commands on stdin, one a line, until its end (the module docstring)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    player = Player(site)
    while line := await reader.readline():
        answer = await player.answer(json.loads(line))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    await player.drain()


def spread(items: list[T], count: int) -> list[list[T]]:
    """Deal ``items`` out to ``count`` (≥ 1) shares: item ``i`` to share ``i % count``."""
    return [items[i::count] for i in range(count)]


def gathered(shares: list[list[T]]) -> list[T]:
    """The items ``spread`` dealt out into ``shares``, back in their first order."""
    count = len(shares)
    total = sum(map(len, shares))
    return [shares[i % count][i // count] for i in range(total)]


class Clients:
    """Client processes (``python -m bench.page_tabs``) that play the tabs of one endpoint."""

    def __init__(self, processes: list[asyncio.subprocess.Process]) -> None:
        self.processes = processes

    @classmethod
    async def start(cls, site: Endpoint, count: int, cwd: str) -> Clients:
        """Start ``count`` client processes for ``site`` (at least one) in ``cwd``."""
        endpoint = json.dumps([site.port, site.origin, site.user_id, site.cookie])
        command = [sys.executable, "-m", "bench.page_tabs", endpoint]
        processes = [
            await asyncio.create_subprocess_exec(
                *command,
                cwd=cwd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=2**24,
            )
            for _ in range(max(1, count))
        ]
        return cls(processes)

    async def ask(self, commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send ``commands[i]`` to process ``i`` (all at once); return their answers in order.
        Raises ``RuntimeError`` when a process ended instead of answering."""
        for process, command in zip(self.processes, commands, strict=True):
            assert process.stdin is not None
            process.stdin.write((json.dumps(command) + "\n").encode())
        answers = []
        for process in self.processes:
            assert process.stdout is not None
            line = await process.stdout.readline()
            if not line:
                raise RuntimeError(f"a tab client process ended ({await process.wait()})")
            answers.append(json.loads(line))
        return answers

    async def open(self, source: str, tabs: list[list[Any]], at_once: int) -> None:
        """Spread ``tabs`` (``[cookie, loads]`` each) over the processes, tab ``i`` to process
        ``i % count``, and have each load and open its own, ``at_once`` pages at a time in
        all (at least one per process)."""
        each = max(1, at_once // len(self.processes))
        shares = spread(tabs, len(self.processes))
        await self.ask([{"open": source, "tabs": share, "loading": each} for share in shares])

    async def wait(self, patience: float) -> list[list[Any]]:
        """Each process's ``wait`` answers, back in the order of the tabs given to ``open``."""
        answers = await self.ask([{"wait": patience}] * len(self.processes))
        return gathered([answer["tabs"] for answer in answers])

    async def drain(self) -> list[float]:
        """Wait for every process's successor pages still loading; return the seconds each
        took (``Player.drain``)."""
        answers = await self.ask([{"drain": True}] * len(self.processes))
        return [seconds for answer in answers for seconds in answer["drained"]]

    async def close(self) -> None:
        """End the processes (their stdin closed; killed when still running after 10 s)."""
        for process in self.processes:
            if process.stdin is not None:
                process.stdin.close()
        for process in self.processes:
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


def main() -> None:
    """Play tabs for the endpoint given as ``[port, origin, user_id, cookie]`` (JSON) in
    ``sys.argv[1]``: what was imported is frozen out of the collector's way first."""
    port, origin, user_id, cookie = json.loads(sys.argv[1])
    gc.freeze()
    asyncio.run(serve(Endpoint(int(port), str(origin), int(user_id), str(cookie))))


if __name__ == "__main__":
    main()
