"""The host's admin pages (host/admin.py, host/models.py) in Simplified Chinese and in English.

A staff user who chose zh-hans reads the admin index, the conversations' and workspaces'
changelists and change forms with the host's app, model, field, filter and choice names in the
catalogue's words (会话, 工作区, …); one who chose English reads them in English.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import strip_tags

from host.models import LanguagePreference, Message, Session, Workspace

pytestmark = pytest.mark.django_db

# Page -> the English names that must not show in zh-hans, and their Chinese words.
ENGLISH = {
    "index": ["Conversation host", "Sessions", "Workspaces"],
    "sessions": [
        "Title",
        "Owner",
        "Archived",
        "Compactions",
        "By status",
        "By permission preset",
        "Read Only",
        "Full Access",
        "Idle",
    ],
    "session": [
        "Working directory",
        "Cwd",
        "Agent preset",
        "Approval policy",
        "Request config",
        "Context window",
        "External id",
        "True from creation until the first turn starts.",
        "Open the conversation",
        "Messages",
        "Source kind",
        "Role",
    ],
    "workspaces": ["Path", "Name", "Created", "Select workspace to change"],
    "workspace": ["Path:", "Name:", "Change workspace"],
}
CHINESE = {
    "index": ["会话宿主", "会话", "工作区"],
    "sessions": ["标题", "所有者", "已归档", "压缩次数", "以 状态", "权限预设", "只读", "完全访问"],
    "session": [
        "工作目录",
        "Agent 预设",
        "审批策略",
        "请求配置",
        "上下文窗口",
        "从创建起为真，直到第一轮开始。",
        "打开会话",
        "消息",
        "角色",
        "来源类型",
        "用户",
    ],
    "workspaces": ["路径", "名称", "创建于"],
    "workspace": ["路径", "名称", "修改 工作区"],
}
# What an English reader sees instead (the field labels, choices and model names).
IN_ENGLISH = {
    "index": ["Conversation host", "Conversations", "Workspaces"],
    "sessions": ["Title", "Owner", "Archived", "By status", "Read-only", "Full access", "Idle"],
    "session": ["Working directory", "Agent preset", "Open the conversation", "Messages", "Role"],
    "workspaces": ["Path", "Name", "Created"],
    "workspace": ["Path", "Name", "Change workspace"],
}


def text_of(html: str) -> str:
    """The page's text without tags or scripts, whitespace collapsed."""
    html = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    return " ".join(strip_tags(html).split())


def has(text: str, phrase: str) -> bool:
    """Whether ``phrase`` is in ``text`` as whole words (a Latin word not inside a longer one)."""
    return re.search(rf"(?<![A-Za-z]){re.escape(phrase)}(?![A-Za-z])", text) is not None


@pytest.fixture
def pages(client: Client, django_user_model: Any) -> Any:
    """``read(language)``: the host's admin pages as text for a staff user who chose it."""
    user = django_user_model.objects.create_superuser("root", password="pw")
    workspace = Workspace.objects.create(owner=user, path="/work/weather", name="weather")
    session = Session.objects.create(
        owner=user, title="Weather CLI", cwd="/work/weather", workspace=workspace, revision=1
    )
    Message.objects.create(
        session=session, seq=1, role="user", source_kind="user", content="Ship it."
    )
    urls = {
        "index": reverse("admin:index"),
        "sessions": reverse("admin:host_session_changelist"),
        "session": reverse("admin:host_session_change", args=[session.pk]),
        "workspaces": reverse("admin:host_workspace_changelist"),
        "workspace": reverse("admin:host_workspace_change", args=[workspace.pk]),
    }
    client.force_login(user)

    def read(language: str) -> dict[str, str]:
        LanguagePreference.objects.update_or_create(user=user, defaults={"language": language})
        found = {}
        for name, url in urls.items():
            response = client.get(url)
            assert response.status_code == 200, url
            found[name] = text_of(response.content.decode())
        return found

    return read


def test_the_host_admin_reads_chinese_in_zh_hans(pages: Any):
    text = pages("zh-hans")
    english = {page: [p for p in ENGLISH[page] if has(text[page], p)] for page in ENGLISH}
    missing = {page: [p for p in CHINESE[page] if p not in text[page]] for page in CHINESE}
    assert {page: found for page, found in english.items() if found} == {}
    assert {page: gone for page, gone in missing.items() if gone} == {}


def test_the_host_admin_reads_english_in_english(pages: Any):
    text = pages("en")
    missing = {page: [p for p in IN_ENGLISH[page] if not has(text[page], p)] for page in IN_ENGLISH}
    assert {page: gone for page, gone in missing.items() if gone} == {}
    assert not re.search(r"[\u4e00-\u9fff]", text["session"].replace("简体中文", ""))
