"""The Chinese pages after a handoff, the language taken from the browser (Accept-Language),
read on a full page load: the relay notice, the brief's card (its name, title, headings and
"Goal:"), the line under a continued title and the token basis speak Chinese, and Chinese
sentences use full-width punctuation (no "(", ")", ".", ":" or ";" beside a Chinese character)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import make_source, make_user, record_of

from handoff import operations

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]

CJK = r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]"
HALF_WIDTH = re.compile(rf"{CJK}[(),.:;]|[()]{CJK}|{CJK} [(]")
SKIPPED = {"script", "style", "code", "pre"}


class Text(HTMLParser):
    """The page's visible text, one string per element's run of text (code and scripts left
    out), and every aria-label."""

    def __init__(self) -> None:
        super().__init__()
        self.skipping: list[bool] = []
        self.runs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.runs += [value or "" for name, value in attrs if name == "aria-label"]
        if tag not in {"input", "br", "img", "meta", "link", "hr", "wbr"}:
            self.skipping.append(bool(self.skipping and self.skipping[-1]) or tag in SKIPPED)

    def handle_endtag(self, tag: str) -> None:
        if self.skipping and tag not in {"input", "br", "img", "meta", "link", "hr", "wbr"}:
            self.skipping.pop()

    def handle_data(self, data: str) -> None:
        if not (self.skipping and self.skipping[-1]) and data.strip():
            self.runs.append(" ".join(data.split()))


def text_of(html: str) -> str:
    parser = Text()
    parser.feed(html)
    return "\n".join(parser.runs)


@pytest.fixture
def chinese(client: Client) -> Any:
    """A conversation handed off once, its owner signed in with a Chinese browser."""
    source = make_source(make_user("ada"), title="天气命令行")
    successor = record_of(operations.run_attempt(source.pk, manual=True)).target
    client.force_login(source.owner)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-CN,zh;q=0.9"
    return client, source, successor


def test_the_pages_after_a_handoff_speak_chinese(chinese: Any):
    client, source, successor = chinese

    old = client.get(reverse("chat:session", args=[source.pk])).content.decode()
    new = client.get(reverse("chat:session", args=[successor.pk])).content.decode()

    assert '<html lang="zh-hans">' in old
    assert "已接续到「天气命令行」" not in old  # the successor keeps its own title
    assert re.search(r'<p class="notice"[^>]*>已接续到 “[^”]+”。此会话现在是转发站', old)
    assert "This conversation is now a relay" not in old
    assert '<span class="conv-hint-note">已由后继会话接续</span>' in old
    assert 'aria-label="来自「天气命令行」的接续简报"' in new
    assert '<h2 class="msg-title" translate="no">来自「天气命令行」的接续简报</h2>' in new
    assert "<strong>目标：</strong>" in new and "Goal:" not in new
    assert "<h2>待办</h2>" in new or "<h2>下一步</h2>" in new
    assert not re.search(r"<h2>(Decisions|Constraints|Artifacts|Verified|Pending|Next steps)", new)


def test_chinese_sentences_use_full_width_punctuation(chinese: Any):
    client, source, successor = chinese
    pages = {
        "source": reverse("chat:session", args=[source.pk]),
        "successor": reverse("chat:session", args=[successor.pk]),
        "lineage": reverse("handoff_web:lineage", args=[successor.pk]),
        "settings": reverse("handoff_settings:card"),
    }
    status = client.post(
        reverse("chat:compose", args=[successor.pk]),
        {"text": "/handoff status", "client_id": "status-zh"},
        headers={"HX-Request": "true"},
    )

    found = {
        name: [line for line in text_of(html).splitlines() if HALF_WIDTH.search(line)]
        for name, html in {
            **{name: client.get(url).content.decode() for name, url in pages.items()},
            "status": status.content.decode(),
        }.items()
    }

    assert {name: lines for name, lines in found.items() if lines} == {}


def sentence(html: str, opening: str) -> str:
    """The visible text of the element that ``opening`` (its start tag's text) begins, its
    links' text included, whitespace folded."""
    inner = html.split(opening, 1)[1]
    closing = re.match(r"<(\w+)", opening)
    assert closing is not None
    text = re.sub(r"<[^>]+>", "", inner.split(f"</{closing[1]}>", 1)[0])
    return " ".join(text.split())


def test_a_chinese_sentence_ending_in_a_link_ends_with_a_full_stop(chinese: Any):
    client, source, _successor = chinese
    waiting = make_source(source.owner, title="发布说明")
    operations.review_on(waiting.pk)
    operations.enable(waiting.pk)
    operations.run_attempt(waiting.pk, manual=True)

    old = client.get(reverse("chat:session", args=[source.pk])).content.decode()
    review = client.get(reverse("chat:session", args=[waiting.pk])).content.decode()

    assert sentence(old, '<div class="banner" role="status">').startswith(
        "此会话接续在 天气命令行。在此发送的消息会转发到那里。"
    )
    assert sentence(review, '<p id="review-notice"').endswith("阅读其简报，然后提交或丢弃。")
    assert sentence(review, '<p class="panel-note">全局开关').endswith("设置。")


def test_an_unknown_handoff_action_is_answered_in_chinese(chinese: Any):
    client, _source, successor = chinese
    answer = client.post(
        reverse("chat:compose", args=[successor.pk]),
        {"text": "/handoff frob", "client_id": "frob-zh"},
        headers={"HX-Request": "true"},
    ).content.decode()

    feedback = text_of(answer)
    assert "未知的 /handoff 操作「frob」。用法：/handoff [now | enable" in feedback
    assert "Use /handoff" not in feedback
    assert "/handoff [now | enable | disable | status" in feedback


def test_the_card_and_the_admin_name_the_token_basis_alike(chinese: Any, django_user_model):
    client, _source, _successor = chinese
    card = text_of(client.get(reverse("handoff_settings:card")).content.decode())
    root = django_user_model.objects.create_superuser("root", password="pw")
    client.force_login(root)
    admin = text_of(
        client.get(reverse("admin:handoff_handoffsettings_change", args=[1])).content.decode()
    )

    assert "Token 计算依据" in card and "Token 计算依据" in admin
    assert "Token 口径" not in card
