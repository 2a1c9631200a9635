"""English and Simplified Chinese (docs/design.md, Live settings, screens and languages): every
page in zh-hans, complete catalogs, the language chosen by the browser or kept per user, and
follower events in the user's language.

The walk renders every page a user sees in zh-hans and fails on a Latin word in the visible text
(``chinese_text.english_words``: user content, code and a few names aside).
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from chinese_text import english_words
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation
from handoff_support import make_source

from follower.events import deliver
from follower.fragments import language_of
from follower.models import FollowerEvent
from handoff import operations
from handoff.attempt import Outcome
from handoff.models import HandoffRecord, MainState
from host.models import LanguagePreference

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]

LOCALE = Path(__file__).resolve().parents[2] / "locale"
CATALOGS = sorted(LOCALE.glob("*/LC_MESSAGES/*.po"))
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture
def chinese(client: Client, django_user_model: Any) -> Client:
    """A staff user who chose Simplified Chinese, signed in."""
    user = django_user_model.objects.create_user("ada", password="pw", is_staff=True)
    LanguagePreference.objects.create(user=user, language="zh-hans")
    client.force_login(user)
    return client


def test_every_page_renders_in_chinese_without_english_words(chinese: Client):
    user = LanguagePreference.objects.get().user
    source = make_source(user)
    assert operations.run_attempt(source.pk, manual=True).ok
    successor = HandoffRecord.objects.get(source=source).target
    assert successor is not None
    other = make_source(user, title="Release notes")
    pages = [
        reverse("chat:session", args=[source.pk]),
        reverse("chat:session", args=[successor.pk]),
        reverse("chat:session", args=[other.pk]),
        reverse("handoff_web:lineage", args=[successor.pk]),
        reverse("chat:new"),
        reverse("chat:sidebar"),
        reverse("handoff_settings:card"),
        reverse("handoff_settings:activity"),
        reverse("handoff_web:panel", args=[other.pk]),
    ]
    found = {}
    for url in pages:
        response = chinese.get(url)
        assert response.status_code == 200, url
        assert '<html lang="zh-hans">' in response.content.decode() or "<html" not in (
            response.content.decode()
        )
        found[url] = english_words(response.content.decode())
    status = chinese.post(
        reverse("chat:compose", args=[other.pk]),
        {"text": "/handoff status", "client_id": "s1"},
        headers={"HX-Request": "true"},
    )
    found["/handoff status"] = english_words(status.content.decode())
    leftover = {url: words for url, words in found.items() if words}
    assert leftover == {}, "\n".join(f"{url}: {' '.join(words)}" for url, words in leftover.items())


def test_a_waiting_review_a_backoff_and_degraded_services_render_in_chinese(
    chinese: Client, settings: Any
):
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "plan_mode": None, "compaction": None}
    user = LanguagePreference.objects.get().user
    handed = make_source(user)
    assert operations.run_attempt(handed.pk, manual=True).ok  # its plan-mode row is not inherited
    successor = HandoffRecord.objects.get(source=handed).target
    assert successor is not None
    waiting = make_source(user, title="Parser")
    operations.review_on(waiting.pk)
    assert operations.run_attempt(waiting.pk, manual=True).outcome is Outcome.WAITING_FOR_REVIEW
    backing_off = make_source(user, title="Lexer")
    operations.enable(backing_off.pk)
    MainState.objects.filter(session=backing_off).update(
        failures=2, retry_at=timezone.now() + timedelta(minutes=5)
    )
    pages = {
        "review": reverse("handoff_web:panel", args=[waiting.pk]),
        "backoff": reverse("handoff_web:panel", args=[backing_off.pk]),
        "lineage": reverse("handoff_web:lineage", args=[successor.pk]),
    }
    html = {name: chinese.get(url).content.decode() for name, url in pages.items()}
    status = chinese.post(
        reverse("chat:compose", args=[successor.pk]),
        {"text": "/handoff status", "client_id": "s2"},
        headers={"HX-Request": "true"},
    )
    html["/handoff status"] = status.content.decode()
    for text in ("/handoff commit", "/handoff now"):  # nothing waits / a review already waits
        other = backing_off if text == "/handoff commit" else waiting
        reply = chinese.post(
            reverse("chat:compose", args=[other.pk]),
            {"text": text, "client_id": text},
            headers={"HX-Request": "true"},
        )
        html[text] = reply.content.decode()
    assert "有一个接续等待审阅" in html["review"] and "提交简报" in html["review"]
    assert "自动接续在 2 次尝试失败后等待" in html["backoff"]
    assert "源会话的 Agent 没有 Plan 模式服务" in html["lineage"]
    assert "自动压缩已关闭" in html["/handoff status"]
    assert "没有等待审阅的接续" in html["/handoff commit"]
    assert "已有一个接续在等待审阅" in html["/handoff now"]
    leftover = {name: words for name, text in html.items() if (words := english_words(text))}
    report = (f"{name}: {' '.join(words)}" for name, words in leftover.items())
    assert leftover == {}, "\n".join(report)


def test_the_meters_sentence_inheritance_details_and_a_missing_service_speak_chinese(
    chinese: Client, settings: Any
):
    user = LanguagePreference.objects.get().user
    handed = make_source(user, workspace=False)  # its workspace row carries the path
    assert operations.run_attempt(handed.pk, manual=True).ok
    successor = HandoffRecord.objects.get(source=handed).target
    assert successor is not None
    idle = make_source(user, title="Parser")  # its own switch is off
    html = {
        "relay": chinese.get(reverse("chat:session", args=[handed.pk])).content.decode(),
        "panel": chinese.get(reverse("handoff_web:panel", args=[idle.pk])).content.decode(),
        "lineage": chinese.get(
            reverse("handoff_web:lineage", args=[successor.pk])
        ).content.decode(),
    }
    settings.HANDOFF_SERVICES = {**settings.HANDOFF_SERVICES, "session_controller": None}
    html["/handoff now"] = chinese.post(
        reverse("chat:compose", args=[idle.pk]),
        {"text": "/handoff now", "client_id": "s3"},
        headers={"HX-Request": "true"},
    ).content.decode()
    html["page"] = chinese.get(reverse("chat:session", args=[idle.pk])).content.decode()
    assert "已接续到后继会话：不会再从这里开始接续。" in html["relay"]
    assert "仅在请求时接续（/handoff now）" in html["panel"]
    assert "不是已登记的工作区（不会新建）" in html["lineage"]
    assert "（源会话日志中最近一次选择的模型）" in html["lineage"]
    assert "本服务器没有提供会话控制器：接续不可用，自动接续已关闭。" in html["/handoff now"]
    leftover = {name: words for name, text in html.items() if (words := english_words(text))}
    report = (f"{name}: {' '.join(words)}" for name, words in leftover.items())
    assert leftover == {}, "\n".join(report)


def test_the_latest_attempt_reads_as_one_chinese_sentence(chinese: Client):
    user = LanguagePreference.objects.get().user
    HandoffRecord.objects.create(
        source=make_source(user), phase="failed", reason="manual", source_revision=1
    )
    text = " ".join(chinese.get(reverse("handoff_settings:activity")).content.decode().split())
    assert re.search(r"最近一次尝试于 <span[^>]*><a [^>]*>[^<]+</a></span>，[^<]*前。", text)


def test_the_commands_speak_chinese_to_people_and_keep_json_keys(tmp_path: Path):
    source = make_source(title="Parser")
    transcript = SAMPLES / "claude-code-1.x-sidechains.jsonl"
    with translation.override("zh-hans"):
        status = StringIO()
        call_command("handoff", "status", str(source.pk)[:8], stdout=status)
        as_json = StringIO()
        call_command("handoff", "status", str(source.pk), "--json", stdout=as_json)
        with pytest.raises(CommandError) as unknown:
            call_command("handoff", "status", "ffffffff")
        imported, skipped = StringIO(), StringIO()
        call_command("import_transcript", str(transcript), stdout=imported, stderr=StringIO())
        call_command("import_transcript", str(transcript), stdout=StringIO(), stderr=skipped)
        with pytest.raises(CommandError) as unread:
            call_command("import_transcript", str(tmp_path / "absent.jsonl"))
    text = status.getvalue()
    assert f"会话 {source.pk}" in text and "开关" in text and "已启用：否" in text
    assert "仅在请求时接续（/handoff now）" in text  # the meter's sentence
    assert "switches" not in text and "came from" not in text and "none" not in text
    assert json.loads(as_json.getvalue())["enabled"] is False  # machine keys stay
    assert str(unknown.value) == "没有以 'ffffffff' 开头的会话 ID。"
    assert imported.getvalue().startswith("已导入会话 ")
    assert skipped.getvalue().startswith(f"已跳过 {transcript}：已导入为会话 ")
    assert "以下文件未导入任何内容：" in str(unread.value) and "无法读取" in str(unread.value)


def test_the_admin_names_the_products_models_and_fields_in_chinese(chinese: Client):
    user = LanguagePreference.objects.get().user
    user.is_superuser = True
    user.save()
    source = make_source(user)
    operations.enable(source.pk)
    index = chinese.get(reverse("admin:index")).content.decode()
    assert "接续记录" in index and "接续状态" in index and "主会话" not in index
    assert "Handoff records" not in index
    states = chinese.get(reverse("admin:handoff_mainstate_changelist")).content.decode()
    assert "自动接续" in states and "已请求接续" in states and "Requested" not in states
    state = chinese.get(reverse("admin:handoff_mainstate_change", args=[source.pk]))
    assert "连续失败次数" in state.content.decode() and "Retry at" not in state.content.decode()


def test_the_sign_in_page_follows_accept_language(client: Client):
    html = client.get(reverse("login"), headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    text = html.content.decode()
    assert '<html lang="zh-hans">' in text and "登录以继续你的会话。" in text
    assert english_words(text) == []
    english = client.get(reverse("login"), headers={"Accept-Language": "en-US"})
    assert "Sign in to continue your conversations." in english.content.decode()


def test_the_seeds_words_are_the_chinese_ui_words(chinese: Client):
    user = LanguagePreference.objects.get().user
    session = make_source(user)
    html = chinese.get(reverse("chat:session", args=[session.pk])).content.decode()
    assert ">精确</span>" in html
    card = chinese.get(reverse("handoff_settings:card"), headers={"Accept-Language": "en"})
    assert "状态通道不可用" in card.content.decode() or "连接中…" in card.content.decode()


def test_a_language_choice_is_kept_for_the_user(client: Client, django_user_model: Any):
    user = django_user_model.objects.create_user("bo", password="pw")
    client.force_login(user)
    response = client.post(reverse("chat:language"), {"language": "zh-hans", "next": "/new/"})
    assert response.status_code == 302 and response["Location"] == "/new/"
    assert LanguagePreference.objects.get(user=user).language == "zh-hans"
    other_browser = Client()
    other_browser.force_login(user)
    page = other_browser.get(reverse("chat:new"), headers={"Accept-Language": "en"})
    assert '<html lang="zh-hans">' in page.content.decode()
    assert language_of(user.pk) == "zh-hans"


def test_an_unknown_language_changes_nothing(client: Client, django_user_model: Any):
    user = django_user_model.objects.create_user("bo", password="pw")
    client.force_login(user)
    client.post(reverse("chat:language"), {"language": "xx", "next": "/new/"})
    assert not LanguagePreference.objects.exists()
    assert language_of(user.pk) == "en"


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: p.name)
def test_every_msgid_has_a_chinese_translation_and_the_mo_is_built_from_it(
    catalog: Path, tmp_path: Path
):
    built = tmp_path / "built.mo"
    result = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", str(built), str(catalog)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "untranslated" not in result.stderr and "fuzzy" not in result.stderr, result.stderr
    assert built.read_bytes() == catalog.with_suffix(".mo").read_bytes(), (
        f"{catalog.with_suffix('.mo')} is stale: run manage.py compilemessages"
    )


def test_follower_fragments_speak_the_receiving_users_language(chinese: Client):
    user = LanguagePreference.objects.get().user
    session = make_source(user)
    operations.enable(session.pk)
    deliver(user.pk)  # what the commit runs: the panel is rendered then
    event = FollowerEvent.objects.filter(user=user, kind="handoff.switch").get()
    panel = event.payload["fragments"][0]["html"]
    assert "自动接续" in panel and "Automatic handoff" not in panel


def test_the_scripts_catalog_is_one_cached_url_per_language(client: Client):
    """A page asks for the JavaScript catalog at a URL naming its language, which the browser
    keeps for an hour and revalidates with 304: a tab that follows a handoff does not fetch it
    again, and a language change fetches the other language's catalog."""
    sources = {}
    for language in ("en", "zh-hans"):
        page = client.get(reverse("login"), headers={"accept-language": language})
        found = re.search(r'<script src="([^"]*/jsi18n/[^"]*)"', page.content.decode())
        assert found, "the page loads no JavaScript catalog"
        sources[language] = found[1]
    assert sources["en"] != sources["zh-hans"]
    catalog = client.get(sources["zh-hans"], headers={"accept-language": "zh-hans"})
    assert "max-age=3600" in catalog["Cache-Control"]
    assert json.dumps("状态通道不可用")[1:-1] in catalog.content.decode()  # as the view escapes it
    again = client.get(
        sources["zh-hans"],
        headers={"accept-language": "zh-hans", "if-modified-since": catalog["Last-Modified"]},
    )
    assert again.status_code == 304


def test_follower_fragments_speak_the_browsers_language_when_the_user_chose_none(
    client: Client, django_user_model: Any
):
    user = django_user_model.objects.create_user("bo", password="pw")
    client.force_login(user)
    client.get(reverse("chat:new"), headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"})
    session = make_source(user)
    operations.enable(session.pk)
    deliver(user.pk)  # what the commit runs: the panel is rendered then
    event = FollowerEvent.objects.filter(user=user, kind="handoff.switch").get()
    panel = event.payload["fragments"][0]["html"]
    assert "自动接续" in panel and "Automatic handoff" not in panel


def test_a_chosen_language_outlasts_the_browsers(client: Client, django_user_model: Any):
    user = django_user_model.objects.create_user("bo", password="pw")
    client.force_login(user)
    client.post(reverse("chat:language"), {"language": "en", "next": "/new/"})
    page = client.get(reverse("chat:new"), headers={"Accept-Language": "zh-CN"})
    assert '<html lang="en">' in page.content.decode()
    assert language_of(user.pk) == "en"


def test_the_browsers_language_follows_the_latest_page_until_one_is_chosen(
    client: Client, django_user_model: Any
):
    user = django_user_model.objects.create_user("bo", password="pw")
    client.force_login(user)
    client.get(reverse("chat:new"), headers={"Accept-Language": "zh-CN"})
    assert language_of(user.pk) == "zh-hans"
    page = client.get(reverse("chat:new"), headers={"Accept-Language": "en-US"})
    assert '<html lang="en">' in page.content.decode()
    assert language_of(user.pk) == "en"


def test_the_sign_in_page_offers_the_language_choice(client: Client):
    login = reverse("login")
    page = client.get(login, headers={"Accept-Language": "en"}).content.decode()
    assert f'action="{reverse("chat:language")}"' in page
    assert 'value="zh-hans"' in page and ">中文</button>" in page
    client.post(reverse("chat:language"), {"language": "zh-hans", "next": login})
    chinese = client.get(login, headers={"Accept-Language": "en"}).content.decode()
    assert '<html lang="zh-hans">' in chinese and "登录" in chinese


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/no-such-page/", 404),
        ("/handoff/sessions/00000000-0000-0000-0000-000000000000/lineage/", 404),
    ],
)
def test_error_pages_speak_chinese_without_debug(chinese: Client, path: str, status: int):
    """With DEBUG off (production), a missing page is the site's own page in the user's language,
    not Django's bare English "Not Found"."""
    response = chinese.get(path)
    assert response.status_code == status
    text = response.content.decode()
    assert "Not Found" not in text
    assert "找不到" in text
    assert english_words(text) == []


def test_a_refused_settings_change_speaks_chinese(client: Client, django_user_model: Any):
    """A non-staff user posting to the global settings gets 403: the site's page, in Chinese."""
    user = django_user_model.objects.create_user("bo", password="pw")
    LanguagePreference.objects.create(user=user, language="zh-hans")
    client.force_login(user)
    response = client.post(reverse("handoff_settings:field", args=["handoff_ratio"]), {})
    assert response.status_code == 403
    text = response.content.decode()
    assert "Forbidden" not in text
    assert "无权" in text
