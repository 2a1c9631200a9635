"""The context meter's sentence (docs/design.md, The context meter) is written from the core's
verdict and figures in the active language: English and Simplified Chinese, plural forms
included."""

from __future__ import annotations

import pytest
from django.utils import translation

from handoff.core.tokens import TokensOut
from handoff.core.trigger import Metrics, TriggerConfig
from handoff.meter.rules import Hold, MeterOut, meter
from handoff.words.meter import summary

DEMO = TriggerConfig()  # ratio 0.75, ceiling 120 000, 4 turns, 3 compactions
EXACT: TokensOut = {"value": 0, "basis": "context", "label": "exact"}
UNAVAILABLE: TokensOut = {"value": 0, "basis": "context", "label": "unavailable"}


def at(
    tokens: int, turns: int, compactions: int = 0, hold: Hold | None = None, label: str = "exact"
) -> MeterOut:
    metrics = Metrics(tokens=tokens, turns=turns, compactions=compactions, capacity=32_000)
    return meter(metrics, DEMO, UNAVAILABLE if label == "unavailable" else EXACT, hold)


CASES = [
    (
        at(22_920, 6),
        "Hands off at 24,000 tokens: 1,080 to go, about 1 turn at this pace.",
        "在 24,000 个 token 时接续：还差 1,080，按当前速度约 1 轮。",
    ),
    (
        at(6_000, 6),
        "Hands off at 24,000 tokens: 18,000 to go, about 18 turns at this pace.",
        "在 24,000 个 token 时接续：还差 18,000，按当前速度约 18 轮。",
    ),
    (
        at(6_000, 2),
        "Hands off at 24,000 tokens: 18,000 to go, about 6 turns at this pace; not before turn 4.",
        "在 24,000 个 token 时接续：还差 18,000，按当前速度约 6 轮；不早于第 4 轮。",
    ),
    (
        at(30_000, 2),
        "Hands off after 2 more turns: 24,000 tokens reached.",
        "再过 2 轮后接续：已达到 24,000 个 token。",
    ),
    (
        at(30_000, 3),
        "Hands off after 1 more turn: 24,000 tokens reached.",
        "再过 1 轮后接续：已达到 24,000 个 token。",
    ),
    (
        at(25_080, 9),
        "Due: hands off at the next idle moment (24,000 tokens reached).",
        "已到期：将在下一个空闲时刻接续（已达到 24,000 个 token）。",
    ),
    (
        at(9_000, 9, 3),
        "Due: hands off at the next idle moment (3 of 3 compactions).",
        "已到期：将在下一个空闲时刻接续（已压缩 3 次，上限 3 次）。",
    ),
    (
        at(30_000, 9, hold=Hold.SESSION_OFF),
        # Both switches may be off (the demo's start): turning this one on is not enough alone.
        "Hands off only when asked (/handoff now): this conversation's own switch is off; "
        "with it and the global switch in Settings on, at 24,000 tokens.",
        "仅在请求时接续（/handoff now）：此会话自己的开关已关闭；"
        "打开它和设置中的全局开关后，在 24,000 个 token 时接续。",
    ),
    (
        at(0, 9, label="unavailable"),
        "Automatic handoff is off for this conversation: no token figure — the model reported "
        "no usage and the meter measured nothing. /handoff still works.",
        "此会话的自动接续已关闭：没有 token 数值——模型未报告用量，计量器也未测得。"
        "/handoff 仍然可用。",
    ),
]


@pytest.mark.parametrize(("figures", "english", "chinese"), CASES)
def test_the_sentence_in_both_languages(figures: MeterOut, english: str, chinese: str) -> None:
    with translation.override("en"):
        assert summary(figures) == english
    with translation.override("zh-hans"):
        assert summary(figures) == chinese
