"""Evidence a reader can open: the successor's brief links "(log #N)" to the source's entry
(``handoff.web.log_links``)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from django.utils import translation
from handoff_support import make_source
from test_transaction import successor_of

from handoff import operations
from handoff.web.log_links import link_log_entries
from host import log
from host.models import Role

pytestmark = pytest.mark.django_db


def test_the_successors_brief_links_each_cited_entry_to_the_sources_timeline(client):
    source = make_source()
    log.append_message(
        source,
        role="assistant",
        source_kind="assistant",
        content=json.dumps({"command": "pytest -q"}),
        tool_name="Bash",
    )
    result = log.append_message(
        source, role="tool", source_kind="tool", content="12 passed in 0.4s", tool_name="Bash"
    )
    operations.run_attempt(source.pk, manual=True)
    client.force_login(source.owner)

    page = client.get(reverse("chat:session", args=[successor_of(source).pk])).content.decode()

    href = f"{reverse('chat:session', args=[source.pk])}?all=1#entry-{result.seq}"
    cited = f'(<a href="{href}" class="log-cite">log #{result.seq}</a>)'
    assert f"`pytest -q` → 12 passed in 0.4s {cited}" in (
        page.replace("<code>", "`").replace("</code>", "`")
    )
    whole = client.get(reverse("chat:session", args=[source.pk]) + "?all=1").content.decode()
    assert f'id="entry-{result.seq}"' in whole
    assert source.messages.get(seq=result.seq).role == Role.TOOL


def test_an_entry_of_an_earlier_log_and_unescaped_text_are_not_linked():
    linked = link_log_entries(
        "<b>x</b> (earlier log #3) (log #4)", "7d0c1a66-0000-4000-8000-000000000000"
    )
    assert linked.startswith(
        '&lt;b&gt;x&lt;/b&gt; (<span class="log-cite">earlier log #3</span>) (<a href='
    )
    assert linked.endswith('#entry-4" class="log-cite">log #4</a>)')


def test_a_chinese_reader_reads_the_citations_in_chinese_and_an_older_one_stays_text():
    source, earlier = "7d0c1a66-0000-4000-8000-000000000000", "7d0c1a66-0000-4000-8000-000000000001"
    with translation.override("zh-hans"):
        linked = link_log_entries("a (log #4) b (earlier log #3) c (older log #2)", source, earlier)
    assert '#entry-4" class="log-cite">日志 #4</a>)' in linked
    earlier_page = reverse("chat:session", args=[earlier])
    assert f'{earlier_page}?all=1#entry-3" class="log-cite">更早的日志 #3</a>)' in linked
    assert linked.endswith('c (<span class="log-cite">更早之前的日志 #2</span>)')
