"""docs/spec.md, Deferral: one test per blocker."""

from __future__ import annotations

from handoff.core.blockers import BlockerFacts, find_blockers


def test_nothing_in_flight_means_no_blocker():
    assert find_blockers(BlockerFacts(), manual=False) == []


def test_activity_in_flight():
    facts = BlockerFacts(activities=["turn", "compaction", "turn"])
    assert find_blockers(facts, manual=False) == ["activity:turn", "activity:compaction"]


def test_owned_live_agent():
    facts = BlockerFacts(live_owned_agents=["sub-1"])
    assert find_blockers(facts, manual=True) == ["owned-agent:sub-1"]


def test_team_roster_blocks_only_with_more_than_one_member():
    assert find_blockers(BlockerFacts(team_members=1), manual=False) == []
    assert find_blockers(BlockerFacts(team_members=2), manual=False) == ["active-team-roster"]


def test_pending_inbox():
    assert find_blockers(BlockerFacts(pending_inbox=1), manual=False) == ["pending-inbox"]


def test_custom_permissions_defer_automatic_attempts_only():
    facts = BlockerFacts(permission_preset="custom")
    assert find_blockers(facts, manual=False) == ["custom-permissions-require-manual-transfer"]
    assert find_blockers(facts, manual=True) == []


def test_all_blockers_in_the_seeds_order():
    facts = BlockerFacts(["job"], ["s"], 3, 2, "custom")
    assert find_blockers(facts, manual=False) == [
        "activity:job",
        "owned-agent:s",
        "active-team-roster",
        "pending-inbox",
        "custom-permissions-require-manual-transfer",
    ]
