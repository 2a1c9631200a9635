"""The offline summary's digest, kept per session.

Building the brief from the whole log costs time that grows with the log (reading every
message, walking every text). So the digest (``handoff.digest.fold.Digest``: bounded, a fold
over the log) is kept in ``SummaryDigest``: at each idle of a session (``refresh``, from the
``session_idle`` receiver) and at each summary (``brief``) the stored digest reads the entries
after its ``seq`` and is stored again when there were any. A compaction (the session's
``compactions`` moved on), a new working directory, or a stored digest that cannot be read
starts it afresh from the whole effective context; either way the brief equals the one built
from the whole log at once.

The digest is stored in one statement (``UPDATE``, or ``INSERT`` for the first): a crash
half-way leaves the old digest or the new one, never a mix, and the old one is only behind
(the next read folds in what it misses).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import IntegrityError, transaction

from handoff.core.offline_brief import brief_of
from handoff.digest.fold import Digest
from handoff.models import SummaryDigest
from handoff.services import HostSession, SessionController

log = logging.getLogger(__name__)


def stored(session: HostSession) -> Digest | None:
    """Return the digest stored for ``session`` (one query), or ``None`` when there is none,
    it holds for an earlier compaction or another working directory, or cannot be read."""
    row = SummaryDigest.objects.filter(session_id=session.pk).first()
    if row is None or row.compactions != session.compactions or row.cwd != session.cwd:
        return None
    try:
        return Digest.from_json(row.state)
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("digest of session %s unreadable, read afresh: %s", session.pk, exc)
        return None


def store(session: HostSession, digest: Digest) -> None:
    """Store ``digest`` for ``session`` in one statement (see the module's note on crashes)."""
    values: dict[str, Any] = {
        "compactions": session.compactions,
        "cwd": session.cwd,
        "seq": digest.seq,
        "state": digest.to_json(),
    }
    if SummaryDigest.objects.filter(session_id=session.pk).update(**values):
        return
    try:
        with transaction.atomic():
            SummaryDigest.objects.create(session_id=session.pk, **values)
    except IntegrityError:  # stored meanwhile by another process: this one is as new
        SummaryDigest.objects.filter(session_id=session.pk).update(**values)


def refresh(session: HostSession, host: SessionController) -> Digest:
    """Fold the entries ``session`` logged since its stored digest in and store it; return it.

    A stored digest with nothing after it is current: returned as read (two queries, no write).
    """
    found = stored(session)
    if found is None:
        digest = Digest(cwd=session.cwd).read(host.effective_context(session))
    else:
        read_to = found.seq
        digest = found.read(host.effective_context(session, after=read_to))
        if digest.seq == read_to:
            return digest
    store(session, digest)
    return digest


def brief(session: HostSession, host: SessionController) -> dict[str, Any]:
    """Return the offline brief of ``session`` (``offline_brief.brief_of``) from its kept
    digest, refreshed first; the same brief as ``offline_brief`` over its effective context."""
    return brief_of(refresh(session, host).result())
