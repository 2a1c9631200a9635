"""The context meter's sentence in the active language (docs/design.md, The context meter).

The core (``handoff.meter.rules``, plain Python) decides which sentence applies (its
``verdict``) and the figures; the words are written here with ``gettext`` / ``ngettext``, so the
status report, the API and ``manage.py handoff`` say it in the active language and the pages,
which render it again as they show it (``meter_summary`` filter), in the reader's.
"""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext

from handoff.core.phases import Reason
from handoff.meter.rules import MeterOut as MeterFigures
from handoff.meter.rules import Verdict
from handoff.shapes import MeterOut


def _figure(value: int) -> str:
    """A count as the active language groups it (24,000)."""
    return number_format(value, force_grouping=True)


def _counting_down(estimate: int | None, not_before: bool) -> str:
    """Hands off at the trigger point: how many tokens, about how many turns, which turn."""
    if estimate is None and not_before:
        return gettext(
            "Hands off at %(point)s tokens: %(left)s to go; not before turn %(minimum)s."
        )
    if estimate is None:
        return gettext("Hands off at %(point)s tokens: %(left)s to go.")
    if not_before:
        return ngettext(
            "Hands off at %(point)s tokens: %(left)s to go, about %(estimate)s turn at this "
            "pace; not before turn %(minimum)s.",
            "Hands off at %(point)s tokens: %(left)s to go, about %(estimate)s turns at this "
            "pace; not before turn %(minimum)s.",
            estimate,
        )
    return ngettext(
        "Hands off at %(point)s tokens: %(left)s to go, about %(estimate)s turn at this pace.",
        "Hands off at %(point)s tokens: %(left)s to go, about %(estimate)s turns at this pace.",
        estimate,
    )


def _sentence(meter: MeterFigures) -> str:
    """The sentence for the meter's verdict, in the active language, not filled in yet."""
    verdict = meter["verdict"]
    compactions_first = meter["first"] == Reason.REPEATED_COMPACTION
    if verdict == Verdict.UNAVAILABLE:
        return gettext(
            "Automatic handoff is off for this conversation: no token figure — the model "
            "reported no usage and the meter measured nothing. /handoff still works."
        )
    if verdict == Verdict.HANDED_OFF:
        return gettext("Handed off to its successor: no further handoff starts from here.")
    if verdict == Verdict.SESSION_OFF:
        return gettext(
            "Hands off only when asked (/handoff now): this conversation's own switch is off; "
            "with it and the global switch in Settings on, at %(point)s tokens."
        )
    if verdict == Verdict.GLOBAL_OFF:
        return gettext(
            "Hands off by itself only once the global switch in Settings is on (the trigger "
            "point is %(point)s tokens); /handoff now works meanwhile."
        )
    if verdict == Verdict.DUE and compactions_first:
        return gettext(
            "Due: hands off at the next idle moment (%(done)s of %(limit)s compactions)."
        )
    if verdict == Verdict.DUE:
        return gettext("Due: hands off at the next idle moment (%(point)s tokens reached).")
    if verdict == Verdict.TURNS_TO_GO and compactions_first:
        return ngettext(
            "Hands off after %(turns)s more turn: %(limit)s compactions reached.",
            "Hands off after %(turns)s more turns: %(limit)s compactions reached.",
            meter["turns_to_go"],
        )
    if verdict == Verdict.TURNS_TO_GO:
        return ngettext(
            "Hands off after %(turns)s more turn: %(point)s tokens reached.",
            "Hands off after %(turns)s more turns: %(point)s tokens reached.",
            meter["turns_to_go"],
        )
    return _counting_down(meter["turns_estimate"], meter["turns_to_go"] > 0)


def summary(meter: MeterFigures) -> str:
    """Return the meter's one sentence (which criterion fires first and roughly when, or why
    none will) in the active language, its figures grouped as that language writes them."""
    figures = {
        "point": meter["trigger_point"],
        "left": meter["tokens_to_go"],
        "done": meter["compactions"],
        "limit": meter["max_compactions"],
        "minimum": meter["min_turns"],
        "turns": meter["turns_to_go"],
        "estimate": meter["turns_estimate"] or 0,
    }
    return _sentence(meter) % {name: _figure(value) for name, value in figures.items()}


def described(meter: MeterFigures) -> MeterOut:
    """Return ``meter`` with its ``summary`` sentence in the active language."""
    return MeterOut(**meter, summary=summary(meter))
