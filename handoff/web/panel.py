"""What the conversation page's handoff panel shows, built from the one status report.

The panel: the banner "continues in …" on a handed-off session, the token figure
with its basis and label, the session's automatic-handoff switch, "Hand off now", the phases of
the latest attempt and, when deferred, the blockers in words. Everything comes from
``handoff.operations.status``, so the panel says what the command and API say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from handoff import operations, store
from handoff.core.naming import SUFFIX
from handoff.core.phases import COMMITTED_PHASES, UNFINISHED_PHASES, Phase, discarded_note
from handoff.core.terminal import new_terminal_command
from handoff.exceptions import HandoffError, NotAMain, SessionNotFound
from handoff.models import HandoffRecord
from handoff.refusals import refusal_text
from handoff.services import PRODUCT_RUNTIME
from handoff.terminal_brief import brief_file
from handoff.web.review_form import BriefReview
from handoff.words.review import hooked

# The phases an attempt goes through on success, in order (docs/spec.md, The transaction).
PHASE_STEPS: tuple[tuple[Phase, Promise], ...] = (
    (Phase.SUMMARIZING, _("Summarizing")),
    (Phase.PREPARED, _("Successor prepared")),
    (Phase.COMMITTED, _("Committed")),
    (Phase.STARTED, _("Successor started")),
)

_BLOCKER_TEXT = {
    "active-team-roster": _("it leads a team with more than one member"),
    "pending-inbox": _("messages are queued for its next turn"),
    "custom-permissions-require-manual-transfer": _(
        "its permissions are custom: hand it off yourself with “Hand off now”"
    ),
}

# What people read for the report's identifiers (docs/spec.md, Token sources: 精确 / 估算 /
# 不可用); the identifiers stay in the API and the command's JSON.
TOKEN_LABELS: dict[str, Promise] = {
    "exact": _("exact"),
    "estimated": _("estimated"),
    "unavailable": _("unavailable"),
}
BASIS_WORDS: dict[str, Promise] = {
    "context": _("current context"),
    "cumulative": _("cumulative usage"),
}


def describe_blocker(blocker: str) -> str:
    """Return a blocker name (docs/spec.md, Deferral) as a phrase a user understands."""
    kind, _sep, detail = blocker.partition(":")
    if kind == "activity":
        return str(_("something is in flight (%(what)s)") % {"what": detail})
    if kind == "owned-agent":
        return str(_("its subagent %(id)s is still live") % {"id": detail[:8]})
    return str(_BLOCKER_TEXT.get(blocker, blocker))


@dataclass(frozen=True)
class PhaseStep:
    """One step of the progress list; ``state`` is done, current, failed or todo."""

    phase: str
    label: Promise | str
    state: str


def progress(last: Mapping[str, Any] | None) -> list[PhaseStep]:
    """Return the progress list of the latest record, a ``RecordOut`` (empty when there is none).

    A ``failed`` record marks its first step failed (the error says where it stopped), or
    "Discarded at review" (not a failure to people) when the user discarded it; a
    ``committed-start-pending`` record is committed with the start still to come.
    """
    if last is None:
        return []
    phase = last["phase"]
    if discarded_note(phase, last.get("error")):
        return [PhaseStep(Phase.FAILED.value, _("Discarded at review"), "discarded")]
    if phase == Phase.FAILED:
        return [PhaseStep(Phase.FAILED.value, _("Failed"), "failed")]
    if phase == Phase.COMMITTED_START_PENDING:
        done = [PhaseStep(p.value, label, "done") for p, label in PHASE_STEPS[:-1]]
        pending = PhaseStep(phase, _("Start pending: open the successor"), "failed")
        return [*done, pending]
    index = [p for p, _ in PHASE_STEPS].index(Phase(phase))
    return [
        PhaseStep(p.value, label, _state(position, index, finished=phase == Phase.STARTED))
        for position, (p, label) in enumerate(PHASE_STEPS)
    ]


def _state(position: int, index: int, *, finished: bool) -> str:
    if position < index or finished:
        return "done"
    return "current" if position == index else "todo"


def _successor(session: Any, successor_id: str) -> Any:
    """Return the redirect's destination when it is the same user's session, else None."""
    try:
        return operations.owned_session(successor_id, session.owner_id)
    except SessionNotFound:
        return None


def session_panel(session: Any) -> dict[str, Any]:
    """Return the template context of the handoff panel of ``session`` (its owner's view).

    Keys: ``session``, ``report`` (the status report dict, or None with ``error`` when the
    handoff refuses this session, e.g. a subagent), ``successor`` (the redirect's destination
    session, or None), ``forwarding_stopped`` (the successor of a committed attempt whose
    redirect was removed by ``disable``, or None), ``steps``, ``deferred`` (phrases),
    ``polling`` (an attempt is unfinished or requested, and not waiting for review),
    ``review_form`` (the brief of the handoff waiting for review as a ``BriefReview``, or None),
    ``terminal_command`` and ``terminal_hooked`` (``terminal_way``: a terminal session's way
    to its successor).
    """
    context: dict[str, Any] = {
        "session": session,
        "successor": None,
        "forwarding_stopped": None,
        "review_form": None,
        "steps": [],
        "deferred": [],
    }
    try:
        if session.parent_id is not None:
            raise NotAMain(session.pk)
        report = operations.status(session.pk)
    except HandoffError as exc:
        return context | {"report": None, "error": refusal_text(exc), "polling": False}
    last, redirect = report["last"], report["redirect"]
    if redirect:
        context["successor"] = _successor(session, redirect)
    elif last is not None and last["phase"] in COMMITTED_PHASES and last["target"]:
        context["forwarding_stopped"] = _successor(session, last["target"])
    waiting = last is not None and last["phase"] == Phase.PREPARED and last["review_until"]
    unfinished = last is not None and last["phase"] in UNFINISHED_PHASES and not waiting
    return context | {
        "report": report,
        "error": "",
        "steps": progress(last),
        "deferred": [describe_blocker(b) for b in report["deferred"]],
        "polling": report["requested"] or unfinished,
        "review_form": BriefReview(last["brief"] or {}) if waiting and last else None,
        **terminal_way(session, last["id"] if waiting and last else None),
    }


def terminal_way(session: Any, record_id: Any) -> dict[str, Any]:
    """The review form's way to the successor of the brief ``record_id`` waiting for a
    terminal session: ``terminal_command`` (``terminal_command``; "" for a session of this
    product or no record) and ``terminal_hooked`` (``hooked``: ``/clear`` also works there)."""
    command = terminal_command(session, record_id) if record_id is not None else ""
    return {"terminal_command": command, "terminal_hooked": bool(command) and hooked(session)}


def terminal_command(session: Any, record_id: Any) -> str:
    """The command that opens the successor of a terminal session's waiting brief in a new
    terminal ("" for a session of this product): the page says it, beside ``/clear`` when the
    runtime runs the product's hooks (``handoff.core.terminal``); such a brief is claimed in
    the terminal, not committed here. Its prompt names the brief's file (written now,
    ``handoff.terminal_brief``): a successor without the product's hooks reads the brief
    there."""
    if session.runtime == PRODUCT_RUNTIME:
        return ""
    record_key = UUID(str(record_id))  # a record's own id: always a UUID
    record = HandoffRecord.objects.filter(pk=record_key).first()
    brief = str(brief_file(record, session.title)) if record is not None else ""
    return new_terminal_command(record_key, runtime=session.runtime, cwd=session.cwd, brief=brief)


FORWARDING_HINT = _("what is posted here is forwarded to it")
STOPPED_HINT = _("handed off to a successor earlier; forwarding stopped, it is answered here again")
# What the "· 接续xxxxxx" suffix means (docs/spec.md, The transaction, step 8): shown beside such a
# title wherever one is read (the session list, the heading, the tab title, the lineage page).
CONTINUED_NOTE = _("接续 = continued in a successor")


def title_hint(session: Any) -> Promise | str:
    """The line under a conversation's title that explains its ``· 接续`` suffix (the handed-off
    source's title): whether it still forwards or ``disable`` stopped that; "" for
    a title without the suffix."""
    if SUFFIX not in (session.title or ""):
        return ""
    return FORWARDING_HINT if store.redirect_of(str(session.pk)) is not None else STOPPED_HINT


def hint_context(session: Any, oob: bool = False) -> dict[str, Any]:
    """The context of the line under a conversation's title (``handoff/_conv_hint.html``):
    what the suffix means (``continued_note``) and whether it still forwards (``title_hint``);
    ``oob`` swaps it in place from a panel response."""
    return {"hint": title_hint(session), "note": continued_note(session.title or ""), "oob": oob}


def continued_note(title: str) -> Promise | str:
    """The note beside a title with the ``· 接续`` suffix (a handed-off source),
    saying what the suffix means; "" for any other. The host shows it through
    ``settings.HOST_TITLE_NOTES`` beside the title in the session list, the heading and the tab
    title; the lineage page beside its hops' titles."""
    return CONTINUED_NOTE if SUFFIX in title else ""
