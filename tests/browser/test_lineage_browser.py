"""Lineage in headless Chromium (docs/design.md, Lineage): links both ways across the hops of a
chain, the lineage page, and one sidebar row per chain."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from asgi_site import conversation, off_loop
from handoff_support import chain_of, hand_on

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]


def test_lineage_links_lead_both_ways_across_three_hops(
    make_user: Callable[..., Any], user_page: Callable[[Any], Any], live_server: Any
) -> None:
    user = make_user("ada")
    sessions = off_loop(lambda: chain_of(3, user))
    page = user_page(user)
    page.goto(f"{live_server.url}/s/{sessions[0].pk}/")
    for successor in sessions[1:]:
        page.locator(".conv-header a[rel=next]").click()
        page.wait_for_url(f"**/s/{successor.pk}/")
    assert page.locator(".conv-header a[rel=next]").count() == 0
    for predecessor in reversed(sessions[:-1]):
        page.locator(".conv-header a[rel=prev]").click()
        page.wait_for_url(f"**/s/{predecessor.pk}/")
    assert page.locator(".conv-header a[rel=prev]").count() == 0

    page.locator(".conv-header .lineage-all").click()
    page.wait_for_url(f"**/handoff/sessions/{sessions[0].pk}/lineage/")
    hops = page.locator("ol.hops > li")
    assert hops.count() == 3
    assert hops.first.locator(".markdown strong", has_text="Goal:").count() == 1
    hops.nth(2).locator(".hop-title a").last.click()
    page.wait_for_url(f"**/s/{sessions[3].pk}/")


@pytest.mark.parametrize(
    "viewport", [{"width": 1280, "height": 860}, {"width": 390, "height": 844}]
)
def test_the_sidebar_of_a_chain_of_five_shows_one_row(
    make_user: Callable[..., Any],
    user_page: Callable[[Any], Any],
    live_server: Any,
    viewport: dict[str, int],
) -> None:
    user = make_user("ada")
    sessions = off_loop(lambda: chain_of(4, user))
    page = user_page(user)
    page.set_viewport_size(viewport)
    page.goto(f"{live_server.url}/s/{sessions[-1].pk}/")
    drawer = page.locator(".drawer-toggle")  # on a phone the list may sit in a drawer
    if drawer.count() and drawer.is_visible():
        drawer.click()
    rows = page.locator("#session-list .session-row:visible")
    assert rows.count() == 1
    assert rows.first.get_attribute("data-session-id") == str(sessions[-1].pk)

    page.locator("#session-list .chain-older summary").click()
    assert rows.count() == 5
    ids = [rows.nth(i).get_attribute("data-session-id") for i in range(5)]
    assert ids == [str(s.pk) for s in reversed(sessions)]


@pytest.mark.django_db(transaction=True)
def test_handoffs_fold_the_chain_into_one_row_on_another_tab(
    make_user: Callable[..., Any], open_page: Callable[..., Any]
) -> None:
    ada = make_user("ada")
    first = off_loop(lambda: chain_of(0, ada))[0]
    page = open_page(ada, conversation(ada, "Release notes"))
    page.locator(f"#row-{first.pk}").wait_for()
    sessions = off_loop(lambda: hand_on(first, 2))

    fold = page.locator(f"#row-{sessions[-1].pk} > .chain-older > summary")
    fold.filter(has_text="2 earlier handoffs").wait_for()
    assert page.locator("#session-list .session-row:visible").count() == 2
    for session in sessions:  # each row once: the old rows went into the chain's row
        assert page.locator(f"#session-list #row-{session.pk}").count() == 1
    assert page.evaluate("() => follower.state().connection") == "connected"


# Counts the pixels of two same-sized PNGs (base64) whose colours differ by more than
# antialiasing does (any channel by over 64 of 255).
DIFFERENT_PIXELS = """async ([a, b]) => {
  const pixels = async (data) => {
    const png = await fetch("data:image/png;base64," + data);
    const image = await createImageBitmap(await png.blob());
    const canvas = new OffscreenCanvas(image.width, image.height);
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, image.width, image.height).data;
  };
  const [left, right] = [await pixels(a), await pixels(b)];
  let count = 0;
  for (let i = 0; i < left.length; i += 4) {
    const far = [0, 1, 2].some((c) => Math.abs(left[i + c] - right[i + c]) > 64);
    if (far) count += 1;
  }
  return count;
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 1280, "height": 800}, {"width": 390, "height": 844}]
)
def test_nothing_paints_over_the_lineage_line_under_the_title(
    make_user: Callable[..., Any],
    user_page: Callable[[Any], Any],
    live_server: Any,
    viewport: dict[str, int],
) -> None:
    user = make_user("ada")
    sessions = off_loop(lambda: chain_of(2, user))
    page = user_page(user)
    page.set_viewport_size(viewport)
    page.goto(f"{live_server.url}/s/{sessions[1].pk}/")
    line = page.locator(".conv-header").filter(has=page.locator("a[rel=prev]"))
    shown = line.screenshot(animations="disabled")
    page.add_style_tag(content=".handoff-panel { visibility: hidden; }")
    alone = line.screenshot(animations="disabled")
    pictures = [base64.b64encode(picture).decode() for picture in (shown, alone)]
    assert page.evaluate(DIFFERENT_PIXELS, pictures) == 0, "the panel paints over the line"
