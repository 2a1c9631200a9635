"""The page mode's client processes: tabs dealt out and gathered back in order, and a process
that answers its commands and ends with its stdin. No server and nothing timed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from shared_files import ROOT

from bench.page_tabs import Clients, Endpoint, gathered, spread


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_tabs_dealt_out_come_back_in_their_order(count: int) -> None:
    tabs = list(range(10))

    shares = spread(tabs, count)

    assert len(shares) == count
    assert sorted(sum(shares, [])) == tabs
    assert gathered(shares) == tabs


def test_fewer_tabs_than_processes_leave_some_processes_without_tabs() -> None:
    shares = spread(["only"], 4)

    assert shares == [["only"], [], [], []]
    assert gathered(shares) == ["only"]


def test_client_processes_answer_their_commands_and_end_with_their_stdin() -> None:
    site = Endpoint(1, "http://127.0.0.1:1", 1, "sessionid=none")

    async def session() -> tuple[list[list[Any]], list[int | None]]:
        clients = await Clients.start(site, 2, str(ROOT))
        try:
            results = await clients.wait(0.0)  # no tabs opened: nothing to wait for
            await clients.drain()
        finally:
            await clients.close()
        return results, [process.returncode for process in clients.processes]

    results, codes = asyncio.run(session())

    assert results == []
    assert codes == [0, 0]
