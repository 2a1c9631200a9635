"""axe-core on every page of a handoff's walk, in headless Chromium: 0 violations.

The walk (the demo, as a newcomer opens it): sign-in, a conversation, its list (the drawer on a
phone), its ``/handoff status`` report, a conversation whose handoff waits for review (its
panel, then the review form opened from the composer's notice), the old conversation after
``/handoff`` typed in the composer, its successor as a following tab loads it
(``?followed=1``), Lineage, Settings (a followed folder switched on), a followed Claude Code
session's page, a Claude Code session whose brief waits (``/clear`` and the new-terminal
command), the admin index and a handoff record. Each walk runs in English and in
Simplified Chinese (the browser's language), on a phone (390×844) and a desktop (1280×800).

axe-core is the npm package ``package.json`` names (``make test`` runs ``npm ci``); it is
injected into each page and run with its default rules (WCAG A/AA and best practices). A
missing ``node_modules`` fails the tests and says to install it. One walk per language and size
is made once and read by one test per page, so a failure names its page, rule and element.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asgi_site import conversation, off_loop, wait_following
from shared_files import ROOT
from walk_sessions import followed_session, send, sign_in, waiting_in_terminal

from handoff import operations
from handoff.core.phases import Phase
from handoff.models import HandoffRecord
from handoff.tasks import attempt_task
from host.demo import seed_demo

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("immediate_tasks")]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
LANGUAGES = {"en": "en-US", "zh-hans": "zh-CN"}
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
PAGES = [
    "sign-in",
    "conversation",
    "conversation-list",
    "status-report",
    "review-waiting",
    "review-form",
    "handed-off",
    "successor",
    "lineage",
    "settings",
    "external-session",
    "terminal-brief",
    "admin",
    "admin-record",
]
TIMEOUT_MS = 15_000

# Django's stock admin breadcrumbs (its div.breadcrumbs inside the admin's #container): light
# links and text on the admin's header blue, as Django ships them (the colours are the
# variables of django/contrib/admin/static/admin/css/base.css, not this project's). Excepted by
# rule, and only there: the app's own breadcrumbs (nav.breadcrumbs on Lineage, Settings) are not.
EXCEPTED = {
    ("color-contrast", "#container div.breadcrumbs"),
    ("link-in-text-block", "#container div.breadcrumbs"),
}
BOXES = sorted({box for _, box in EXCEPTED})

RUN_AXE = """async (boxes) => {
  const result = await axe.run(document);
  return result.violations.flatMap((rule) => rule.nodes.map((node) => ({
    rule: rule.id,
    impact: rule.impact,
    help: rule.help,
    target: node.target.map((part) => [].concat(part).join(" >>> ")).join(" "),
    inside: boxes.filter((box) => {
      const element = document.querySelector([].concat(node.target[0])[0]);
      return element !== null && element.closest(box) !== null;
    }),
  })));
}"""


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """Run axe-core on ``page`` as it is now; return its violations, one per element:
    ``{"rule", "impact", "help", "target", "inside"}`` (``inside``: the excepted boxes the
    element is in)."""
    page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE, BOXES)
    return [v for v in found if not any((v["rule"], box) in EXCEPTED for box in v["inside"])]


class Walk:
    """The demo set up for the walk: ``weather`` (handed off by ``/handoff`` during the walk),
    ``review`` (a handoff waiting for review), ``external`` (a followed Claude Code session),
    ``terminal`` (a Claude Code session whose brief waits: the continue command)."""

    def __init__(self, tmp: Path) -> None:
        self.weather, self.review = seed_demo()
        self.user = self.weather.owner
        operations.review_on(self.review.pk)
        waiting = operations.run_attempt(self.review.pk, manual=True)
        assert HandoffRecord.objects.get(source=self.review).phase == Phase.PREPARED, waiting
        self.external = followed_session(self.user, tmp)
        self.terminal = waiting_in_terminal(self.user, tmp)

    def pages(self, page: Any, base: str) -> dict[str, Callable[[], None]]:
        """Each step brings ``page`` to the named screen and waits until it is shown."""

        def go(path: str, ready: str) -> Callable[[], None]:
            def step() -> None:
                page.goto(base + path)
                page.locator(ready).first.wait_for()

            return step

        def sign_in_page() -> None:
            page.goto(f"{base}/accounts/login/")
            page.locator("#id_username").wait_for()

        def conversation() -> None:
            sign_in(page, base, self.user)
            go(f"/s/{self.weather.pk}/", "#composer textarea")()

        def conversation_list() -> None:
            toggle = page.locator(".drawer-toggle")
            if toggle.is_visible():  # a phone: the list is a drawer
                toggle.click()
            page.locator("#chat-sidebar .session-row").first.wait_for()

        def status_report() -> None:
            go(f"/s/{self.weather.pk}/", "#composer textarea")()
            send(page, "/handoff status")
            page.locator("#composer-feedback .status-title").wait_for()

        def review_form() -> None:
            page.locator("#review-notice a").first.click()
            page.locator("#handoff-review-form textarea").first.wait_for()

        def handed_off() -> None:
            go(f"/s/{self.weather.pk}/", "#composer textarea")()
            send(page, "/handoff")
            page.locator(".banner a").first.wait_for()

        def successor() -> None:
            record = HandoffRecord.objects.get(source=self.weather)
            self.record = record
            go(f"/s/{record.target_id}/?followed=1", ".msg-plugin")()

        return {
            "sign-in": sign_in_page,
            "conversation": conversation,
            "conversation-list": conversation_list,
            "status-report": status_report,
            "review-waiting": go(f"/s/{self.review.pk}/", "#handoff-review-form"),
            "review-form": review_form,
            "handed-off": handed_off,
            "successor": successor,
            "lineage": lambda: go(f"/handoff/sessions/{self.record.target_id}/lineage/", "h1")(),
            "settings": go("/settings/", "#followed-folders-title"),
            "external-session": go(f"/s/{self.external.pk}/", "#timeline"),
            "terminal-brief": go(f"/s/{self.terminal.pk}/", ".terminal-command"),
            "admin": go("/admin/", "#content"),
            "admin-record": lambda: go(
                f"/admin/handoff/handoffrecord/{self.record.pk}/change/", "#content"
            )(),
        }


@pytest.fixture(scope="module")
def walks() -> dict[tuple[str, str], dict[str, Any]]:
    """The walks made so far in this module, by (language, viewport): page name → violations
    (a list) or the error that stopped the walk there (a string)."""
    return {}


@pytest.fixture
def walk(
    walks: dict[tuple[str, str], dict[str, Any]],
    browser: Any,
    live_server: Any,
    transactional_db: None,
    tmp_path: Path,
) -> Callable[[str, str], dict[str, Any]]:
    """Return ``walk(language, viewport)``: that walk's findings, walked on first use. Fails
    the test, saying how to install it, when axe-core is not in ``node_modules``."""

    def walked(language: str, viewport: str) -> dict[str, Any]:
        if not AXE.exists():
            pytest.fail(f"{AXE.relative_to(ROOT)} is missing: run `make test` (or `npm ci`) first")
        if (language, viewport) not in walks:
            walks[language, viewport] = make_walk(
                browser, live_server.url, tmp_path, language, viewport
            )
        return walks[language, viewport]

    return walked


def make_walk(browser: Any, base: str, tmp: Path, language: str, viewport: str) -> dict[str, Any]:
    """Walk every page in a fresh context; a step that fails ends the walk there."""
    demo = Walk(tmp)
    # Reduced motion: the switch and the drawer are where they end at once (axe reads colours
    # and positions as they are when it runs).
    context = browser.new_context(
        viewport=VIEWPORTS[viewport], locale=LANGUAGES[language], reduced_motion="reduce"
    )
    context.set_default_timeout(TIMEOUT_MS)
    findings: dict[str, Any] = {}
    try:
        page = context.new_page()
        for name, step in demo.pages(page, base).items():
            try:
                step()
                findings[name] = axe_violations(page)
            except Exception as error:  # noqa: BLE001 (reported as the page's failure)
                findings[name] = f"the walk stopped here: {error}"
                break
    finally:
        context.close()
    return findings


def described(name: str, findings: Any) -> str:
    """One line per violation (rule, impact, element, what it asks), or the walk's error."""
    if isinstance(findings, str):
        return findings
    lines = [f"{v['rule']} ({v['impact']}) at {v['target']}: {v['help']}" for v in findings]
    return f"{len(findings)} axe violation(s) on {name}:\n" + "\n".join(lines)


def cases() -> list[Any]:
    """Every (language, viewport, page), named ``language-viewport-page``."""
    return [
        pytest.param(language, viewport, name, id=f"{language}-{viewport}-{name}")
        for language in LANGUAGES
        for viewport in VIEWPORTS
        for name in PAGES
    ]


@pytest.mark.parametrize(("language", "viewport", "name"), cases())
def test_axe_finds_no_violation(walk: Any, language: str, viewport: str, name: str) -> None:
    findings = walk(language, viewport)
    stopped = [f"{page}: {found}" for page, found in findings.items() if isinstance(found, str)]
    assert name in findings, f"the walk stopped before {name}, at {stopped}"
    assert findings[name] == [], described(name, findings[name])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_axe_finds_no_violation_on_the_successor_a_tab_followed_to(
    make_user: Callable[..., Any], open_page: Callable[..., Any], language: str, viewport: str
) -> None:
    """The tab on which ``/handoff`` was typed follows to the successor by itself (the
    follower's websocket, on Daphne: PostgreSQL only), and the page it shows then passes."""
    if not AXE.exists():
        pytest.fail(f"{AXE.relative_to(ROOT)} is missing: run `make test` (or `npm ci`) first")
    ada = make_user("ada")
    source = conversation(ada, "Weather CLI")
    options = {"viewport": VIEWPORTS[viewport], "locale": LANGUAGES[language]}
    page = open_page(ada, source, options=options | {"reduced_motion": "reduce"})
    send(page, "/handoff")
    page.locator("#composer-feedback .feedback").first.wait_for()
    off_loop(lambda: attempt_task.call(str(source.pk), True))  # the task worker's job

    successor = HandoffRecord.objects.select_related("target").get(source=source).target
    assert successor is not None
    page.wait_for_url(f"**/s/{successor.pk}/")
    page.locator(".msg-plugin").first.wait_for()
    wait_following(page, successor)
    found = axe_violations(page)
    assert found == [], described("the followed successor", found)
