"""docs/spec.md, Brief: shape, fence stripping, the 40 000-character cap."""

from __future__ import annotations

import json

import pytest

from handoff.core.brief import (
    BRIEF_FIELDS,
    MAX_BRIEF_CHARS,
    BriefError,
    parse_brief,
    render_brief,
    strip_fences,
    validate_brief,
)

GOOD = {
    "goal": "Ship the importer",
    "decisions": ["stream line by line"],
    "constraints": ["no network"],
    "artifacts": ["/repo/host/importers/claude.py"],
    "verified": ["figures match SOURCES.md"],
    "pending": ["codex compaction lines: no sample"],
    "next_steps": ["write the README"],
    "uncertainties": [],
}


def test_schema_has_the_seeds_eight_fields():
    assert list(BRIEF_FIELDS) == [
        "goal",
        "decisions",
        "constraints",
        "artifacts",
        "verified",
        "pending",
        "next_steps",
        "uncertainties",
    ]


def test_valid_brief_passes_unchanged():
    assert validate_brief(GOOD) == GOOD


def test_missing_lists_count_as_empty():
    brief = validate_brief({"goal": "g"})
    assert brief["artifacts"] == [] and brief["next_steps"] == []


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "must be a JSON object"),
        ({"goal": ""}, "goal must be a non-empty string"),
        ({"goal": "   "}, "goal must be a non-empty string"),
        ({"goal": 3}, "goal must be a non-empty string"),
        ({"goal": "g", "artifacts": "/a"}, "artifacts must be a list of strings"),
        ({"goal": "g", "pending": [1]}, "pending must be a list of strings"),
        ({"goal": "g", "answer": "hi"}, "unknown brief field"),
    ],
)
def test_malformed_briefs_are_refused(obj, message):
    with pytest.raises(BriefError, match=message):
        validate_brief(obj)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"goal": "a\x00b"}, "goal holds a NUL character (\\x00)"),
        ({"goal": "g", "pending": ["ok", "x\ud83d"]}, "pending[1] holds a lone surrogate (U+D83D)"),
        ({"goal": "g", "artifacts": ["\udc00"]}, "artifacts[0] holds a lone surrogate (U+DC00)"),
    ],
)
def test_text_the_database_cannot_store_is_refused_naming_the_field(obj, message):
    with pytest.raises(BriefError) as refused:
        validate_brief(obj)
    assert str(refused.value) == f"{message}, which the database cannot store"


@pytest.mark.parametrize("escape", ["\\u0000", "\\ud800", "\\udfff"])
def test_a_model_answer_escaping_nul_or_a_lone_surrogate_is_refused(escape):
    with pytest.raises(BriefError, match="^goal holds a"):
        parse_brief('{"goal": "Ship ' + escape + ' it"}')
    assert parse_brief('{"goal": "\\ud83d\\ude00 paired"}')["goal"] == "\U0001f600 paired"


def test_cap_is_forty_thousand_serialized_characters():
    filler = "x" * (MAX_BRIEF_CHARS - len(json.dumps(validate_brief({"goal": "g"}))) - 2)
    at_cap = validate_brief({"goal": "g", "decisions": [filler]})
    assert len(json.dumps(at_cap, ensure_ascii=False)) == MAX_BRIEF_CHARS
    with pytest.raises(BriefError, match="cap is 40000"):
        validate_brief({"goal": "g", "decisions": [filler + "y"]})


def test_fences_are_stripped():
    assert strip_fences('```json\n{"goal": "g"}\n```') == '{"goal": "g"}'
    assert strip_fences('```\n{"goal": "g"}\n```\n') == '{"goal": "g"}'
    assert strip_fences('  {"goal": "g"}  ') == '{"goal": "g"}'


def test_parse_accepts_fenced_json():
    assert parse_brief("```json\n" + json.dumps(GOOD) + "\n```") == GOOD


@pytest.mark.parametrize("text", ["", "Sure! Here is the brief:", '{"goal": "g"', "null"])
def test_parse_refuses_anything_but_a_brief(text):
    with pytest.raises(BriefError):
        parse_brief(text)


def test_render_shows_goal_and_nonempty_sections():
    text = render_brief(GOOD, source_title="Importer")
    assert text.startswith("# Handoff brief from “Importer”")
    assert "**Goal:** Ship the importer" in text
    assert "- /repo/host/importers/claude.py" in text
    assert "Uncertainties" not in text
