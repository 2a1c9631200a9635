"""Token basis and label (docs/spec.md, Token sources)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# pydantic (which the API builds its schema with) reads only typing_extensions' TypedDict on 3.11.
from typing_extensions import TypedDict


class TokenBasis(StrEnum):
    """``context``: current context pressure; ``cumulative``: the four buckets summed."""

    CONTEXT = "context"
    CUMULATIVE = "cumulative"


# How each basis is named on every surface (the card, the admin, the settings row's choices).
BASIS_LABELS: dict[str, str] = {
    TokenBasis.CONTEXT.value: "Current context",
    TokenBasis.CUMULATIVE.value: "Cumulative usage",
}


class TokenLabel(StrEnum):
    """How far a token figure can be trusted (docs/spec.md, Token sources)."""

    EXACT = "exact"
    ESTIMATED = "estimated"
    UNAVAILABLE = "unavailable"


class TokensOut(TypedDict):
    """A token figure as every surface shows it: ``{"value", "basis", "label"}``.

    docs/spec.md, Token sources, states the labels and bases.

    ``value`` in tokens; ``basis`` a ``TokenBasis``, ``label`` a ``TokenLabel`` (their values).
    """

    value: int
    basis: str
    label: str


@dataclass(frozen=True)
class TokenReading:
    """A token figure (tokens) with the basis it was read on and its label."""

    value: int
    basis: TokenBasis
    label: TokenLabel

    def as_dict(self) -> TokensOut:
        """Return ``{"value", "basis", "label"}`` as shown on every surface (``TokensOut``)."""
        return {"value": self.value, "basis": str(self.basis), "label": str(self.label)}


def decide_label(buckets_total: int | None, measured: int | None) -> TokenLabel:
    """Return whether the session has any token source: ``unavailable`` when neither the buckets
    nor the meter are above zero (automatic handoff is off), else the label of
    the buckets (``exact``) or of the meter (``estimated``). ``None`` = source missing.
    """
    if buckets_total:
        return TokenLabel.EXACT
    if measured:
        return TokenLabel.ESTIMATED
    return TokenLabel.UNAVAILABLE


def read_tokens(
    basis: TokenBasis,
    *,
    buckets_total: int | None,
    context_tokens: int | None,
    measured: int | None,
) -> TokenReading:
    """Read a session's tokens on ``basis`` from the projection first, the meter second.

    ``buckets_total`` is the projection's four buckets summed and ``context_tokens`` its prompt
    size of the latest call (both ``None`` when the projection service is missing);
    ``measured`` is the meter's estimate of the effective context (``None`` when missing).
    The figure is labelled by the source it was read from: the projection's
    (the latest call's prompt under ``context``, the buckets under ``cumulative``) is
    ``exact``; the meter's, used when the projection has none (no usage, or no call since the
    last compaction), is ``estimated``; neither source above zero is ``unavailable`` (0).
    """
    if decide_label(buckets_total, measured) is TokenLabel.UNAVAILABLE:
        return TokenReading(0, basis, TokenLabel.UNAVAILABLE)
    exact = buckets_total if basis is TokenBasis.CUMULATIVE else context_tokens
    if exact:
        return TokenReading(int(exact), basis, TokenLabel.EXACT)
    return TokenReading(int(measured or 0), basis, TokenLabel.ESTIMATED)
