"""Token basis and label (seed 003 §5.1–5.3; DESIGN.md, token basis)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TokenBasis(StrEnum):
    """``context``: current context pressure (seed 000); ``cumulative``: buckets summed (§5.3)."""

    CONTEXT = "context"
    CUMULATIVE = "cumulative"


# How each basis is named on every surface (the card, the admin, the settings row's choices).
BASIS_LABELS: dict[str, str] = {
    TokenBasis.CONTEXT.value: "Current context",
    TokenBasis.CUMULATIVE.value: "Cumulative usage",
}


class TokenLabel(StrEnum):
    """Seed 003 §5.2: how far a token figure can be trusted."""

    EXACT = "exact"
    ESTIMATED = "estimated"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class TokenReading:
    """A token figure (tokens) with the basis it was read on and its label."""

    value: int
    basis: TokenBasis
    label: TokenLabel

    def as_dict(self) -> dict[str, object]:
        """Return ``{"value", "basis", "label"}`` as shown on every surface."""
        return {"value": self.value, "basis": str(self.basis), "label": str(self.label)}


def decide_label(buckets_total: int | None, measured: int | None) -> TokenLabel:
    """Return the session's label: exact when the buckets sum above zero, else estimated when
    the meter measures above zero, else unavailable (seed 003 §5.2). ``None`` = source missing.
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
    Under ``context`` the latest call's prompt size is used when known, else the estimate.
    """
    label = decide_label(buckets_total, measured)
    if label is TokenLabel.UNAVAILABLE:
        return TokenReading(0, basis, label)
    if basis is TokenBasis.CUMULATIVE:
        value = buckets_total if label is TokenLabel.EXACT else measured
    else:
        value = context_tokens if context_tokens else measured
    return TokenReading(int(value or 0), basis, label)
