"""The composer's help line names every ``/handoff`` action the composer runs (and
``/compact``), so review, commit, discard, review-on and review-off are found where the others
are."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from handoff_support import make_source

from handoff.operations import Action

pytestmark = pytest.mark.django_db


def test_the_help_line_lists_every_handoff_action(client: Client):
    session = make_source()
    client.force_login(session.owner)

    html = client.get(reverse("chat:session", args=[session.pk])).content.decode()

    (hint,) = re.findall(r'<p class="hint">(.*?)</p>', html, flags=re.S)
    listed = re.search(r"/handoff \[([^\]]*)\]", hint)
    assert listed is not None
    assert sorted(word.strip() for word in listed.group(1).split("|")) == sorted(Action)
    assert "<code>/compact</code>" in hint
