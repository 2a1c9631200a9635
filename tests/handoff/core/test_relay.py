"""docs/spec.md, Forwarding and cycles: relay ids are sha256(source:forward:messageIds)."""

from __future__ import annotations

import hashlib

import pytest

from handoff.core.relay import relay_id


def test_relay_id_is_the_seeds_hash():
    expected = hashlib.sha256(b"s1:forward:m1,m2").hexdigest()
    assert relay_id("s1", ["m1", "m2"]) == expected


def test_relay_id_is_deterministic_and_order_sensitive():
    assert relay_id("s1", ["a"]) == relay_id("s1", ["a"])
    assert relay_id("s1", ["a", "b"]) != relay_id("s1", ["b", "a"])
    assert relay_id("s1", ["a"]) != relay_id("s2", ["a"])


def test_relay_of_nothing_is_refused():
    with pytest.raises(ValueError, match="at least one message"):
        relay_id("s1", [])
