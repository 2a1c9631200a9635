"""The handoff admin (handoff/admin.py, handoff/models.py) names a record's phase and reason,
its columns, a main's state and the settings row in the reader's language."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import strip_tags
from handoff_support import talked

from handoff.models import HandoffRecord, HandoffSettings, MainState

pytestmark = pytest.mark.django_db


def text_of(html: str) -> str:
    """The page's text without tags or scripts, whitespace collapsed."""
    html = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    return " ".join(strip_tags(html).split())


@pytest.fixture
def pages(client: Client, django_user_model: Any) -> Any:
    """``read(language)``: the records' list, a record, a main's state and the settings row as
    text, for a superuser who chose ``language`` (Django's own language cookie)."""
    root = django_user_model.objects.create_superuser("root", password="pw")
    source, successor = talked(root, "Weather CLI"), talked(root, "Weather CLI, continued")
    record = HandoffRecord.objects.create(
        source=source,
        target=successor,
        phase="committed-start-pending",
        reason="context-pressure",
        source_revision=4,
        metrics={"tokens": 150000},
    )
    state = MainState.objects.create(session=successor, enabled=True)
    row, _created = HandoffSettings.objects.get_or_create(pk=1)
    urls = {
        "records": reverse("admin:handoff_handoffrecord_changelist"),
        "record": reverse("admin:handoff_handoffrecord_change", args=[record.pk]),
        "state": reverse("admin:handoff_mainstate_change", args=[state.pk]),
        "settings": reverse("admin:handoff_handoffsettings_change", args=[row.pk]),
    }
    client.force_login(root)

    def read(language: str) -> dict[str, str]:
        client.cookies["django_language"] = language
        return {name: text_of(client.get(url).content.decode()) for name, url in urls.items()}

    return read


def test_the_handoff_admin_names_phases_reasons_and_rows_in_chinese(pages: Any):
    text = pages("zh-hans")
    assert "已提交，待启动" in text["records"] and "上下文压力" in text["records"]
    assert "后继会话" in text["records"] and "Token 数" in text["records"]
    assert "个 token" not in text["records"]
    for english in ("committed-start-pending", "context-pressure", "repeated-compaction"):
        assert english not in text["records"]
    assert "阶段: 已提交，待启动" in text["record"] and "ID:" in text["record"]
    assert "的接续状态" in text["state"] and "main " not in text["state"]
    assert "接续设置" in text["settings"] and "当前上下文" in text["settings"]
    assert "Handoff settings" not in text["settings"] and "Current context" not in text["settings"]


def test_the_handoff_admin_reads_english_in_english(pages: Any):
    text = pages("en")
    assert "committed, start pending" in text["records"] and "context pressure" in text["records"]
    assert "Target" in text["records"] and "Tokens" in text["records"]
    assert "Phase: committed, start pending" in text["record"]
    assert "Handoff state of “Weather CLI, continued”" in text["state"]
    assert "Handoff settings" in text["settings"] and "Current context" in text["settings"]
