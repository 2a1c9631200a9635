"""The database pool after an outage (docs/operations.md): a pooled connection is checked before
it is handed out, so the first request after PostgreSQL comes back answers.

The test process's own connections go through a TCP proxy (``database_cut.ProxyCut``); the
proxy's cut resets every connection, as a server restart does, and the pool still holds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from database_cut import ProxyCut
from django.db import connections
from django.test import Client
from handoff_support import make_user

from bench.follower_site import database_url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def through_proxy() -> Iterator[ProxyCut]:
    """Point this process's pool at the test database through a ``ProxyCut``; restore after."""
    connection: Any = connections["default"]  # PostgreSQL's wrapper: it has close_pool()
    conf = connection.settings_dict
    saved = conf["HOST"], conf["PORT"]
    proxy = ProxyCut(database_url(), conf["HOST"] or "127.0.0.1", int(conf["PORT"] or 5432))
    connection.close()
    connection.close_pool()
    conf["HOST"], conf["PORT"] = "127.0.0.1", proxy.port
    yield proxy
    connection.close()
    connection.close_pool()
    conf["HOST"], conf["PORT"] = saved
    proxy.close()


def test_the_first_request_after_an_outage_answers(through_proxy: ProxyCut):
    client = Client()
    client.force_login(make_user("ada"))
    assert client.get("/api/sessions").status_code == 200
    connections.close_all()  # back into the pool, idle, as between two requests

    through_proxy.cut()
    through_proxy.restore()

    answers = [client.get("/api/sessions").status_code for _ in range(3)]
    assert answers == [200, 200, 200]
