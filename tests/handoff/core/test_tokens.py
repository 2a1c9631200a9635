"""docs/spec.md, Token sources: token sources, the three labels, the two bases."""

from __future__ import annotations

from handoff.core.tokens import TokenBasis, TokenLabel, decide_label, read_tokens


def test_exact_when_the_buckets_sum_above_zero():
    assert decide_label(10, 0) is TokenLabel.EXACT
    assert decide_label(10, None) is TokenLabel.EXACT


def test_estimated_when_buckets_are_zero_but_the_meter_measures():
    assert decide_label(0, 5) is TokenLabel.ESTIMATED
    assert decide_label(None, 5) is TokenLabel.ESTIMATED


def test_unavailable_when_both_are_zero_or_missing():
    assert decide_label(0, 0) is TokenLabel.UNAVAILABLE
    assert decide_label(None, None) is TokenLabel.UNAVAILABLE


def test_context_basis_reads_the_latest_calls_prompt_size():
    reading = read_tokens(
        TokenBasis.CONTEXT, buckets_total=15_160_170, context_tokens=77_334, measured=50_000
    )
    assert reading.as_dict() == {"value": 77_334, "basis": "context", "label": "exact"}


def test_cumulative_basis_sums_the_buckets():
    reading = read_tokens(
        TokenBasis.CUMULATIVE, buckets_total=15_160_170, context_tokens=77_334, measured=1
    )
    assert reading.as_dict() == {"value": 15_160_170, "basis": "cumulative", "label": "exact"}


def test_without_usage_the_meter_estimate_is_used_and_labelled():
    for basis in TokenBasis:
        reading = read_tokens(basis, buckets_total=0, context_tokens=0, measured=1234)
        assert (reading.value, reading.label) == (1234, TokenLabel.ESTIMATED)


def test_missing_projection_falls_back_to_the_meter():
    reading = read_tokens(TokenBasis.CONTEXT, buckets_total=None, context_tokens=None, measured=9)
    assert (reading.value, reading.label) == (9, TokenLabel.ESTIMATED)


def test_unavailable_reads_zero():
    reading = read_tokens(
        TokenBasis.CONTEXT, buckets_total=None, context_tokens=None, measured=None
    )
    assert reading.as_dict() == {"value": 0, "basis": "context", "label": "unavailable"}


def test_after_a_compaction_the_meter_estimate_is_labelled_estimated_not_exact():
    # The session has usage, but no call since its last compaction: the figure is the meter's.
    reading = read_tokens(TokenBasis.CONTEXT, buckets_total=5_000, context_tokens=0, measured=31)
    assert reading.as_dict() == {"value": 31, "basis": "context", "label": "estimated"}
