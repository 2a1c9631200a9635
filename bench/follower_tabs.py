"""Commit → navigation: the pushed follower vs a 2 s polling tab, side by side.

For 1, 50 and 200 simulated tabs of one user on the source, one Daphne worker: a handoff runs
in a process of its own (``handoff now --wait``, as the task worker runs it under ``make run``)
and each tab's time from the route's commit (the redirect's timestamp) to the moment it opens
the successor is recorded.

- push tab: ``follower.js``'s rules over the websocket: hello with the rendered id,
  open the successor when the ``redirect.committed`` event carries it started, else on the
  event that starts it;
- poll tab: the retry rule's design (docs/spec.md, Follower rules), ``GET /follow/snapshot``
  every 2 s (each tab at its own phase), opening the successor once the source redirects to it
  and it is not blank.

Navigation is the decision to open (``location.assign``); loading the next page costs the same
for both. ``start ms`` is the handoff's own time from the route's commit to the successor's
start (the median over the round's handoffs): no follower can open the successor earlier, as it
is shown only once started. Prints p50 / p95 per design and the poll/push ratios, and first
the same for one real Chromium tab running ``follower.js`` (until it requests the
successor's page: the follower's request that brings it in place, or a navigation).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection

from bench.chromium_tabs import CHROMIUM, signed_in_context
from bench.follower_site import Site, in_thread, measured, percentile
from common.caching import FOLLOWED

TABS = ((1, 5), (50, 2), (200, 1))
"""(tabs, handoffs) per round."""
POLL_INTERVAL = 2.0
"""Seconds between the polling tab's snapshot reads (docs/spec.md, Follower rules: retry rule)."""
PATIENCE = 30.0
"""Seconds a tab waits for the successor before it counts as missed."""
CHROMIUM_HANDOFFS = 5


async def _push_tab(socket: ClientConnection, source: str) -> float:
    waiting: str | None = None
    try:
        while True:
            frame = json.loads(await socket.recv())
            kind, payload = frame.get("kind"), frame.get("payload", {})
            if kind == "redirect.committed" and payload["source"] == source:
                waiting = payload["destination"]
                row = payload["session"]
            elif kind in ("session.updated", "session.added") and waiting is not None:
                row = payload["session"]
            else:
                continue
            if row["id"] == waiting and not row["blank"]:
                return time.time()
    finally:
        await socket.close()


async def _poll_tab(site: Site, source: str) -> float:
    await asyncio.sleep(random.uniform(0, POLL_INTERVAL))
    while True:
        try:
            snapshot = json.loads(await site.get("/follow/snapshot"))
        except ValueError:  # an error page: the server is overloaded; poll again
            snapshot = {"sessions": []}
        rows = {r["id"]: r for r in snapshot["sessions"]}
        destination = rows.get(source, {}).get("redirect_to")
        if destination is not None and not rows[destination]["blank"]:
            return time.time()
        await asyncio.sleep(POLL_INTERVAL)


async def _round(site: Site, tabs: int, push: bool) -> tuple[list[float], float]:
    """One handoff watched by ``tabs`` tabs; return each tab's commit → navigation seconds
    and the handoff's own commit → successor started seconds."""
    source = await in_thread(site.conversation, f"bench {tabs} tabs")
    source_id = str(source.pk)
    if push:
        rendered = await in_thread(site.event_id)
        sockets = await asyncio.gather(*(site.open_tab(rendered) for _ in range(tabs)))
        watching = [asyncio.create_task(_push_tab(s, source_id)) for s in sockets]
    else:
        watching = [asyncio.create_task(_poll_tab(site, source_id)) for _ in range(tabs)]
    await site.hand_off(source)
    done, late = await asyncio.wait(watching, timeout=PATIENCE)
    for task in late:
        task.cancel()
    committed = await in_thread(site.committed_at, source)
    floor = await in_thread(site.started_after_commit, source)
    return [task.result() - committed for task in done if not task.exception()], floor


async def _measure(site: Site) -> None:
    if CHROMIUM.exists():
        real = await _chromium(site, CHROMIUM_HANDOFFS)
        print(
            f"one Chromium tab, pushed: p50 {measured(percentile(real, 0.5))} ms, "
            f"p95 {measured(percentile(real, 0.95))} ms over {len(real)} handoffs"
        )
    else:
        print(f"one Chromium tab: skipped, {CHROMIUM} is missing")
    print(f"{'tabs':>5} {'design':>7} {'p50 ms':>8} {'p95 ms':>8} {'missed':>7} {'start ms':>9}")
    results: dict[int, dict[str, list[float]]] = {}
    for tabs, handoffs in TABS:
        results[tabs] = {}
        for design in ("push", "poll"):
            samples: list[float] = []
            floors: list[float] = []
            for _ in range(handoffs):
                tab_samples, floor = await _round(site, tabs, push=design == "push")
                samples += tab_samples
                floors.append(floor)
            results[tabs][design] = samples
            missed = tabs * handoffs - len(samples)
            print(
                f"{tabs:>5} {design:>7} {measured(percentile(samples, 0.5)):>8}"
                f" {measured(percentile(samples, 0.95)):>8} {missed:>7}"
                f" {measured(percentile(floors, 0.5)):>9}"
            )
    print(f"{'tabs':>5} {'poll/push p50':>14} {'poll/push p95':>14}")
    for tabs, by_design in results.items():
        ratios = [
            percentile(by_design["poll"], share) / percentile(by_design["push"], share)
            for share in (0.5, 0.95)
        ]
        print(f"{tabs:>5} {ratios[0]:>14.1f} {ratios[1]:>14.1f}")


async def _chromium(site: Site, handoffs: int) -> list[float]:
    """One real Chromium tab (Debian's) on the source: commit → the successor's request.

    The request is the follower's (``?followed=1``: it brings the page in place without a
    navigation), or a navigation when the page could not come in place.
    """
    from playwright.async_api import async_playwright

    samples: list[float] = []
    async with async_playwright() as playwright:
        browser, context = await signed_in_context(playwright, site)
        page = await context.new_page()
        for _ in range(handoffs):
            source = await in_thread(site.conversation, "bench chromium")
            path = f"/s/{source.pk}/"
            await page.goto(path)
            await page.wait_for_function(
                "() => window.follower?.state().connection === 'connected'"
            )
            asked: list[float] = []

            def note(request: Any, into: list[float] = asked) -> None:
                followed = f"{FOLLOWED}=1" in urlsplit(request.url).query
                if followed or request.is_navigation_request():
                    into.append(time.time())

            page.on("request", note)
            await site.hand_off(source)
            moved = "(source) => location.pathname !== source"
            await page.wait_for_function(moved, arg=path, timeout=PATIENCE * 1000)
            await page.wait_for_load_state()
            page.remove_listener("request", note)
            committed = await in_thread(site.committed_at, source)
            samples += [asked[0] - committed] if asked else []
        await browser.close()
    return samples


def run() -> None:
    """Print the side-by-side table: push vs 2 s poll at 1, 50 and 200 tabs."""
    print("follower: commit → navigation, pushed follower vs the seed's 2 s polling tab")
    site = Site("bench-tabs")
    try:
        asyncio.run(_measure(site))
    finally:
        site.close()
