"""The settings card's own setting, with the default a host that sets none gets.

``card_settings()`` returns it as one typed object, ``CardSettings``, read from
``django.conf.settings`` at each call (``common.app_settings``). The card also extends the
handoff's ``HANDOFF_BASE_TEMPLATE`` (``handoff.conf``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from common.app_settings import read


@dataclass(frozen=True)
class CardSettings:
    """The settings card's setting (name: unit, default — meaning).

    - ``HANDOFF_SETTINGS_SECTIONS`` (``sections``): template names, default none — the host's
      own sections under the card, rendered in order with the card's context.
    """

    sections: Sequence[str] = ()


def card_settings() -> CardSettings:
    """Return the card's settings as the host sets them now, each unset one its default."""
    return read(CardSettings, "HANDOFF_SETTINGS_")
