"""Token figures of a session: the usage projection and the heuristic meter.

docs/spec.md, Token sources, states their order and labels.

Reading is O(1): both come from the session's ``UsageProjection`` row, kept current by
``host.log`` as entries are appended.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from common.reads import once
from host.models import Session, UsageProjection

# The meter's heuristic: about four characters per token (a fixed heuristic).
CHARS_PER_TOKEN = 4

# Token bases and labels (docs/spec.md, Token sources).
CONTEXT, CUMULATIVE = "context", "cumulative"
EXACT, ESTIMATED, UNAVAILABLE = "exact", "estimated", "unavailable"

# The largest figure one model call may report in a bucket (tokens): far above any model's
# window, and small enough that a session's summed buckets stay inside a 64-bit column.
MAX_CALL_TOKENS = 10**9


@dataclass(frozen=True)
class Usage:
    """The four usage buckets of one model call or a whole session, in tokens."""

    uncached_input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        """The cumulative figure: the four buckets summed."""
        return self.uncached_input + self.output + self.cache_read + self.cache_write

    @property
    def prompt(self) -> int:
        """The prompt size of one call: uncached input + cache read + cache write."""
        return self.uncached_input + self.cache_read + self.cache_write

    def __add__(self, other: Usage) -> Usage:
        """Sum two calls' (or sessions') buckets, bucket by bucket."""
        return Usage(
            self.uncached_input + other.uncached_input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )


def projection_of(session: Session) -> UsageProjection:
    """Return the session's projection row, creating an empty one on first use (read once per
    page request: ``common.reads``)."""
    return _projection(session.pk)


@once
def _projection(session_key: UUID) -> UsageProjection:
    projection, _ = UsageProjection.objects.get_or_create(session_id=session_key)
    return projection


def session_usage(session: Session) -> Usage:
    """Return the session's summed buckets (tokens), folded from its log."""
    p = projection_of(session)
    return Usage(
        p.uncached_input_tokens, p.output_tokens, p.cache_read_tokens, p.cache_write_tokens
    )


def context_tokens(session: Session) -> int:
    """Return the prompt size of the latest model call with usage since the last compaction
    (tokens; 0 when none)."""
    return projection_of(session).context_tokens


def measure(session: Session) -> int:
    """Estimate the effective context (what follows the last compaction) in tokens."""
    chars = projection_of(session).effective_chars
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class TokenFigure:
    """A session's token figure (tokens) on one basis, labelled by the source it was read from
    (docs/spec.md, Token sources)."""

    value: int
    basis: str
    label: str

    def as_dict(self) -> dict[str, object]:
        """Return ``{"value", "basis", "label"}``, the shape every surface shows."""
        return {"value": self.value, "basis": self.basis, "label": self.label}


def token_figure(session: Session, basis: str) -> TokenFigure:
    """Read the session's tokens on ``basis`` (``context`` or ``cumulative``).

    The usage projection first — the latest call's prompt size (``context``) or the buckets
    summed (``cumulative``) — labelled ``exact``; when it has none (no usage, or no call since
    the last compaction), the meter's estimate of the effective context, labelled
    ``estimated``; ``unavailable`` (0) when neither the buckets nor the meter have anything.
    The handoff reads the same sources through its services (``handoff.core.tokens``).
    """
    buckets, measured = session_usage(session).total, measure(session)
    if not buckets and not measured:
        return TokenFigure(0, basis, UNAVAILABLE)
    exact = buckets if basis == CUMULATIVE else context_tokens(session)
    if exact:
        return TokenFigure(exact, basis, EXACT)
    return TokenFigure(measured, basis, ESTIMATED)
