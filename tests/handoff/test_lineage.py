"""docs/design.md, Lineage: predecessor and successor read from the records, on every surface."""

from __future__ import annotations

import re
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse
from handoff_support import chain_of, make_source, make_user, talked

from handoff import operations
from handoff.core.phases import Phase
from handoff.lineage import records
from handoff.models import HandoffRecord
from handoff.web.commands import handoff_command
from host.models import Session
from host.signals import session_links

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_tasks")]


@pytest.fixture
def three_hops(django_capture_on_commit_callbacks: Callable[..., Any]) -> list[Session]:
    """A → B → C → D: a source handed off three times."""
    return chain_of(3, settle=lambda: django_capture_on_commit_callbacks(execute=True))


def test_each_session_names_its_neighbours(three_hops: list[Session]) -> None:
    a, b, c, d = (s.pk for s in three_hops)
    assert [records.predecessor(s) for s in (a, b, c, d)] == [None, a, b, c]
    assert [records.successor(s) for s in (a, b, c, d)] == [b, c, d, None]


def test_the_chain_is_the_same_from_every_hop(three_hops: list[Session]) -> None:
    expected = [(s.pk, t.pk) for s, t in zip(three_hops, three_hops[1:], strict=False)]
    for session in three_hops:
        assert [(r.source_id, r.target_id) for r in records.chain(session.pk)] == expected


def test_the_redirect_map_is_flat_but_the_successor_is_the_next_hop(
    three_hops: list[Session],
) -> None:
    a, b, _, d = three_hops
    assert operations.status(a.pk)["redirect"] == str(d.pk)  # forwarding goes to the end
    assert operations.status(a.pk)["successor"] == str(b.pk)


def test_status_of_a_successor_says_where_it_came_from(three_hops: list[Session]) -> None:
    a, b, c, _ = three_hops
    report = operations.status(b.pk)
    assert (report["predecessor"], report["successor"]) == (str(a.pk), str(c.pk))
    origin = report["origin"]
    assert origin is not None and origin["source"] == str(a.pk)
    assert origin["target"] == str(b.pk) and origin["reason"] == "manual"
    assert origin["inheritance"][0]["setting"] == "cwd"


def test_a_session_outside_any_chain_has_no_lineage() -> None:
    report = operations.status(make_source().pk)
    assert (report["predecessor"], report["successor"], report["origin"]) == (None, None, None)


def test_disable_stops_forwarding_but_keeps_the_history(three_hops: list[Session]) -> None:
    a, b, *_ = three_hops
    operations.disable(a.pk)
    report = operations.status(a.pk)
    assert report["redirect"] is None
    assert report["successor"] == str(b.pk)


def test_a_failed_attempt_is_no_hop() -> None:
    source = make_source()
    HandoffRecord.objects.create(
        source=source, phase=Phase.FAILED, reason="manual", source_revision=1, error="boom"
    )
    assert records.chain(source.pk) == [] and records.successor(source.pk) is None


def test_the_hosts_hook_answers_who_was_handed_off_to_whom(three_hops: list[Session]) -> None:
    a, b, c, d = three_hops
    other = make_source(make_user("bob"))
    answers = session_links.send(sender=Session, session_ids=[a.pk, d.pk, other.pk])
    assert [answer for _receiver, answer in answers] == [{a.pk: b.pk, c.pk: d.pk}]  # in and out


def test_the_api_detail_names_predecessor_and_successor(
    three_hops: list[Session], client: Any
) -> None:
    a, b, c, _ = three_hops
    client.force_login(b.owner)
    detail = client.get(f"/api/sessions/{b.pk}").json()
    assert (detail["predecessor"], detail["successor"]) == (str(a.pk), str(c.pk))
    first = client.get(f"/api/sessions/{a.pk}").json()
    assert (first["predecessor"], first["successor"]) == (None, str(b.pk))


# --- the pages --------------------------------------------------------------------------------


def page(client: Any, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return str(response.content.decode())


def test_the_header_links_both_neighbours(three_hops: list[Session], client: Any) -> None:
    a, b, c, _ = three_hops
    client.force_login(b.owner)
    html = page(client, reverse("chat:session", args=[b.pk]))
    assert f'rel="prev" href="{reverse("chat:session", args=[a.pk])}"' in html
    assert f'rel="next" href="{reverse("chat:session", args=[c.pk])}"' in html
    assert reverse("handoff_web:lineage", args=[b.pk]) in html


def test_the_lineage_page_lists_every_hop_with_its_brief_rendered(
    three_hops: list[Session], client: Any
) -> None:
    client.force_login(three_hops[0].owner)
    html = page(client, reverse("handoff_web:lineage", args=[three_hops[2].pk]))
    chain = records.chain(three_hops[2].pk)
    assert re.findall(r'data-record-id="([0-9a-f-]+)"', html) == [str(r.pk) for r in chain]
    assert html.count("<h2>Goal</h2>") + html.count("<strong>Goal:</strong>") == 3
    assert '"goal":' not in html  # Markdown, not raw JSON
    assert html.count("<caption>Inheritance</caption>") == 3
    sentence = re.compile(
        r"Asked for by hand on <time datetime=\"[^\"]+\">\d{4}-\d\d-\d\d \d\d:\d\d</time>, at "
        r"150,000 tokens of a 200,000-token window, after 5 turns and 0 compactions\."
    )
    assert len(sentence.findall(html)) == 1
    assert html.count("Asked for by hand on <time datetime=") == 3


def test_the_lineage_page_in_chinese_shows_the_briefs_headings_in_chinese(
    three_hops: list[Session], client: Any
) -> None:
    client.force_login(three_hops[0].owner)
    response = client.get(
        reverse("handoff_web:lineage", args=[three_hops[2].pk]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    html = response.content.decode()
    assert html.count("<strong>目标：</strong>") == 3
    assert html.count("<h1>接续简报</h1>") == 3
    assert "<h2>约束</h2>" in html
    for english in ("Goal:", "Handoff brief", "<h2>Constraints</h2>", "<h2>Next steps</h2>"):
        assert english not in html


def test_an_entry_the_second_hop_cites_from_the_first_log_links_there(
    three_hops: list[Session], client: Any
) -> None:
    a, b, c, _ = three_hops
    client.force_login(a.owner)
    html = page(client, reverse("handoff_web:lineage", args=[c.pk]))
    rule = "Do not touch the API."
    entry = a.messages.filter(content__contains=rule).order_by("seq").first()
    assert entry is not None
    first_hop = f"{reverse('chat:session', args=[a.pk])}?all=1#entry-{entry.seq}"
    assert html.count(f"<li>{rule} (") == 3  # once a hop, though the user said it five times
    assert f'{rule} (<a href="{first_hop}" class="log-cite">log #{entry.seq}</a>)' in html
    assert f'{rule} (<a href="{first_hop}" class="log-cite">earlier log #{entry.seq}</a>)' in html
    older = f'<span class="log-cite">older log #{entry.seq}</span>'
    assert f"{rule} ({older})" in html  # the third hop's: two logs back
    successor = page(client, reverse("chat:session", args=[c.pk]))
    assert f'(<a href="{first_hop}" class="log-cite">earlier log #{entry.seq}</a>)' in successor


def test_the_lineage_page_of_someone_elses_session_is_a_404(
    three_hops: list[Session], client: Any
) -> None:
    client.force_login(make_user("mallory"))
    response = client.get(reverse("handoff_web:lineage", args=[three_hops[1].pk]))
    assert response.status_code == 404


def test_slash_handoff_status_on_a_successor_says_where_it_came_from(
    three_hops: list[Session], client: Any
) -> None:
    a, b, *_ = three_hops
    reply = handoff_command(None, session=b, user=b.owner, command="handoff", argument="status")
    assert reply is not None
    assert "Came from" in reply.html and str(a.pk)[:8] in reply.html
    assert "Inherited from its predecessor" in reply.html


def test_the_sidebar_of_a_chain_of_five_is_one_row(
    django_capture_on_commit_callbacks: Callable[..., Any], client: Any
) -> None:
    sessions = chain_of(4, settle=lambda: django_capture_on_commit_callbacks(execute=True))
    client.force_login(sessions[0].owner)
    html = page(client, reverse("chat:sidebar"))
    folded = re.search(r"<details.*?</details>", html, re.S)
    assert folded is not None and "4 earlier handoffs" in folded.group()
    top = re.findall(r'data-session-id="([0-9a-f-]+)"', html.replace(folded.group(), ""))
    assert top == [str(sessions[-1].pk)]


def test_the_lineage_page_links_each_briefs_evidence_to_its_source(
    three_hops: list[Session], client: Any
) -> None:
    a, b, *_ = three_hops
    client.force_login(a.owner)
    html = page(client, reverse("handoff_web:lineage", args=[a.pk]))
    cited = re.findall(r"\(log #(\d+)\)", str(records.chain(a.pk)[0].brief))
    assert cited, "the offline brief cites the log"
    page_of_a = reverse("chat:session", args=[a.pk]) + "?all=1"
    assert f'(<a href="{page_of_a}#entry-{cited[0]}" class="log-cite">log #{cited[0]}</a>)' in html


def test_handoff_status_command_says_where_a_successor_came_from(
    three_hops: list[Session],
) -> None:
    a, b, c, _ = three_hops
    out = StringIO()
    call_command("handoff", "status", str(b.pk), stdout=out)
    assert f"came from    {a.pk} · went to: {c.pk}" in out.getvalue()
    assert "meter        Handed off to its successor: no further handoff" in out.getvalue()


def linked_by_records(user: Any, chains: int, hops: int) -> list[list[Session]]:
    """``chains`` chains of ``hops`` + 1 talked-in sessions, linked by started records only."""
    found = []
    for c in range(chains):
        sessions = [talked(user, f"Task {c}") for _ in range(hops + 1)]
        for source, target in zip(sessions, sessions[1:], strict=False):
            HandoffRecord.objects.create(
                source=source,
                target=target,
                phase=Phase.STARTED,
                reason="manual",
                source_revision=1,
            )
        found.append(sessions)
    return found


def test_folding_costs_the_same_queries_for_one_chain_or_ten(
    client: Any, django_assert_max_num_queries: Callable[..., Any]
) -> None:
    user = make_user("ada")
    client.force_login(user)
    linked_by_records(user, 1, 4)
    with django_assert_max_num_queries(100) as one:
        page(client, reverse("chat:sidebar"))
    linked_by_records(user, 9, 4)
    with django_assert_max_num_queries(100) as ten:
        html = page(client, reverse("chat:sidebar"))
    assert html.count("4 earlier handoffs") == 10
    assert len(ten.captured_queries) == len(one.captured_queries)


def test_the_lineage_page_keeps_the_models_brief_beside_the_reviewed_one(client: Any) -> None:
    user = make_user("ada")
    source, successor = talked(user, "Parser"), talked(user, "Parser, continued")
    HandoffRecord.objects.create(
        source=source,
        target=successor,
        phase=Phase.STARTED,
        reason="manual",
        source_revision=1,
        brief={"goal": "Ship the streaming parser, reviewed"},
        original_brief={"goal": "Ship the parser"},
    )
    client.force_login(user)
    html = page(client, reverse("handoff_web:lineage", args=[successor.pk]))
    assert "Ship the streaming parser, reviewed" in html
    assert "before the review edited it" in html and "Ship the parser<" in html


def test_handoff_status_in_the_composer_shows_an_inheritance_passed_on_unchanged_once(
    three_hops: list[Session], client: Any
) -> None:
    _, b, _, _ = three_hops
    report = operations.status(b.pk)
    assert report["origin"] is not None and report["inheritance"]
    assert report["inheritance"] == report["origin"]["inheritance"]
    client.force_login(b.owner)
    html = client.post(
        reverse("chat:compose", args=[b.pk]),
        {"text": "/handoff status", "client_id": "status"},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert html.count('class="inheritance') == 1
    assert "Inherited from its predecessor" in html


def test_the_lineage_page_does_not_link_to_itself(three_hops: list[Session], client: Any) -> None:
    _, b, _, _ = three_hops
    client.force_login(b.owner)
    url = reverse("handoff_web:lineage", args=[b.pk])
    html = page(client, url)
    assert f'href="{url}"' not in html
    assert f'href="{url}"' in page(client, reverse("chat:session", args=[b.pk]))
