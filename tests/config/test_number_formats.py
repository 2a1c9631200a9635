"""Figures on the Chinese pages are grouped by three with a comma, as on the English pages
(``config/formats/zh_Hans/formats.py``; docs/design.md, Live settings, screens and languages)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse
from django.utils import translation
from django.utils.formats import number_format
from handoff_support import make_source

from host.models import LanguagePreference

pytestmark = pytest.mark.django_db


def test_a_chinese_conversation_page_groups_its_token_count(client: Any) -> None:
    source = make_source(tokens=12_345)
    LanguagePreference.objects.create(user=source.owner, language="zh-hans")
    client.force_login(source.owner)
    html = client.get(reverse("chat:session", args=[source.pk])).content.decode()
    assert '<html lang="zh-hans">' in html
    assert "12,345" in html
    assert "<strong>12,345</strong>" in html  # the meter
    assert not re.search(r">[^<]*12345", html)  # no visible figure ungrouped


def test_grouped_figures_read_the_same_in_both_languages() -> None:
    for language in ("en", "zh-hans"):
        with translation.override(language):
            assert number_format(1_234_567, force_grouping=True) == "1,234,567"
