"""What the log's texts say: the sentences that state rules, decisions and finished work, cut
and cited as the brief shows them (docs/spec.md, Brief; docs/design.md, The brief tells done from
open and cites its evidence).

Shared by the digest, which reads each text once as it folds the log in (the summary's cost must
not grow with the log), and by the offline brief, which shows what it kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

ITEM_CHARS = 300
MAX_ITEMS = 12
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
# A line's list or quote marker ("- ", "* ", "> ", "## "), not an option's dashes ("--days").
MARKER = re.compile(r"^(?:[-*>#]+\s+)+|^\*\*")
RULE = re.compile(
    r"\b(only|never|must|always|don't|do not|dont|no longer|without|should not|shouldn't|"
    r"make sure|avoid|max|maximum|at most|at least|no more than|twice|\d+ times|each|keep|"
    r"on (?:its|their) own|(?<=\W)no(?!,))\b"
    r"|不要|必须|禁止|只能|务必|しないで|ないでください",
    re.IGNORECASE,
)
# A sentence asking for a feature ("Now a 3-day forecast with --days 3 (max 7).", "Add a CSV
# export, at most one line per day."): its quantities describe what is asked, a request of the
# moment, not a standing rule (docs/design.md, "Verified means it passed": requests are not
# constraints); ``STRONG_RULE`` words make it a rule all the same ("Add X, but never Y").
FEATURE_REQUEST = re.compile(
    r"^(?:(?:now|next|also|then|and)\b,?\s*(?:let'?s\s+|please\s+)?(?:a|an|add|implement|support"
    r"|create|build|write)\b|(?:let'?s\s+|please\s+)?(?:add|implement|support|create|build|write)"
    r"\b)",
    re.IGNORECASE,
)
STRONG_RULE = re.compile(
    r"\b(only|never|must|always|don't|do not|dont|no longer|without|should not|shouldn't|"
    r"make sure|avoid|keep|on (?:its|their) own)\b"
    r"|不要|必须|禁止|只能|务必|しないで|ないでください",
    re.IGNORECASE,
)
# Each match of ``RULE`` / ``DECISION`` holds one of these words (lower case): texts without
# any are not searched (the summary's cost stays small at 5 000 messages).
RULE_WORDS = (
    "only", "never", "must", "always", "don't", "do not", "dont", "no longer", "without",
    "should not", "shouldn't", "make sure", "avoid", "max", "at most", "at least",
    "no more than", "twice", " times", "each", "keep", "on its own", "on their own", "no",
    "不要", "必须", "禁止", "只能", "务必", "しないで",
    "ないでください",
)  # fmt: skip
DECISION_WORDS = (
    "decision:", "decided", "'ll use", "will use", "let's use", "lets use", "go with",
    "going with", "instead of", "rather than", "switched to", "chose", "opted", "in favo",
    "fall back to", "falling back to", "established that", "treating", "i kept", "i've kept",
    "改用", "就用",
)  # fmt: skip
# A choice the user states in a later request ("leave plot.py for now"); with ``RULE`` the
# user's later directions are accepted corrections (decisions) too.
USER_CHOICE = re.compile(r"\b(?:for now|leave|keep|instead|switch)\b", re.IGNORECASE)
USER_CHOICE_WORDS = ("for now", "leave", "keep", "instead", "switch")
DECISION = re.compile(
    r"\bdecision:|\b(decided|we'll use|we will use|i'll use|let's use|lets use|going with|"
    r"go with|instead of|rather than|switched to|chose|opted|in favou?r of|fall(?:ing)? back to|"
    r"established that|treating|i(?:'ve)? kept)\b|改用|就用",
    re.IGNORECASE,
)
# A heading over a list of attempts that failed ("Attempted fixes that all failed:").
FAILED_LIST = re.compile(
    r"\b(?:attempt|tried|approach|fix|option)\w*\b[^:\n]*\b(?:fail\w*|did(?: not|n't) work"
    r"|rejected|abandoned)\b[^:\n]*:\s*$",
    re.IGNORECASE,
)
# A sentence that reports an attempt failed or an option rejected.
FAILED_ATTEMPT = re.compile(
    r"\b(?:did(?: not|n't) work|does(?: not|n't) work|didn't help|did not help|broke\b"
    r"|still (?:fails|failed|broken)|(?:was|were) rejected|rejected by|abandoned)",
    re.IGNORECASE,
)
FINISHED = re.compile(
    r"^\s*(?:\W{0,3})(all done|done|implemented|completed|finished|fixed)\b"
    r"|\b(all done|fully implemented"
    r"|(?:is|are) (?:now )?(?:complete|completed|finished|done|closed)"
    r"|has been (?:created|updated|implemented|completed|fixed|added)"
    r"|everything is (?:pushed|done|committed|complete))\b"
    r"|\b(?:complete|completed|done|finished)(?: and (?:pushed|committed|merged|closed))?\W*$"
    r"|完了しました|完成しました|しました[。\s]",
    re.IGNORECASE | re.MULTILINE,
)
# A sentence that says the work is not (yet) finished, or finished only under a condition.
UNFINISHED = re.compile(r"\b(?:not|never|almost|nearly|once|when|until|after|if)\b|n't\b", re.I)
# A summary's task that opens with its id: "E-1 (EPIC): …", "**spotter-gqc.6** (in_progress): …".
TASK_ID = re.compile(r"^[*`\s]*([A-Za-z][\w]*(?:[.-][\w]+)+)[*`]*\s*(?:\(|:)")
MENTIONED_FILE = re.compile(r"(?<![\w.:/~-])(/(?:[\w.@+~-]+/)+[\w@+~-]+\.[A-Za-z]\w{0,7})\b")
MAX_MENTIONED = 10
# The source an item names at its end: "(log #N)", "(earlier log #N)", "(compaction summary)".
CITATION = re.compile(r" \((?:(?:earlier |older )?log #\d+|compaction summary)\)$")
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", re.MULTILINE)


def clip(text: str, limit: int = ITEM_CHARS) -> str:
    """Return ``text`` on one line, cut to at most ``limit`` characters at a sentence end, else
    at a word boundary, with an ellipsis (a word longer than the limit is cut inside)."""
    text = " ".join(text.replace("**", "").split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    ends = [m.end() for m in SENTENCE_END.finditer(head) if m.start() >= limit // 2]
    if ends:
        return head[: ends[-1]].rstrip() + " …"
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip(" ,;:") + "…"


def cited(text: str, seq: int) -> str:
    """Return ``text`` (clipped) naming its log entry: "… (log #1485)"."""
    suffix = f" (log #{seq})"
    return clip(text, ITEM_CHARS - len(suffix)) + suffix


def unique(items: Iterable[str], limit: int = MAX_ITEMS, *, claims: bool = False) -> list[str]:
    """Return the clipped, non-empty, distinct ``items`` in order, at most ``limit``;
    ``claims``: items that say the same but cite another entry are the same (the first kept:
    a rule the user repeated is listed once).

    ``items`` is read only as far as needed: a generator past the ``limit``-th is left unread.
    """
    found: dict[str, str] = {}
    for item in items:
        if len(found) >= limit:
            break
        if item.strip():
            kept = clip(item)
            found.setdefault(uncited(kept) if claims else kept, kept)
    return list(found.values())


def uncited(item: str) -> str:
    """``item`` without the entry it cites at its end."""
    return CITATION.sub("", item)


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences and lines (code blocks left out)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    said = (MARKER.sub("", s.strip()).rstrip(" *#") for s in SENTENCE_END.split(text))
    return [s for s in said if len(s) > 3]


def substantive(request: str) -> bool:
    """Return whether a request asks for work (not a short check such as "did you push?")."""
    text = request.strip()
    if text.endswith(("?", "？")):
        return False
    if len(text) >= 20 or len(text.split()) >= 3:
        return True
    return sum(1 for ch in text if ord(ch) > 0x2E80) >= 8


def cite_or_summary(sentence: str, seq: int) -> str:
    return cited(sentence, seq) if seq else f"{sentence} (compaction summary)"


def tried_and_failed(text: str) -> tuple[str, list[str]]:
    """Split ``text`` into what it says beside its failed attempts, and those attempts: the
    items listed under a heading that says they failed ("Attempted fixes that all failed:")
    and the lines that report their own failure ("… — did not work", "rejected by the user").
    A failed attempt is no decision (docs/design.md, "Verified means it passed")."""
    kept, tried, listing = [], [], False
    for line in text.splitlines():
        item = BULLET.match(line)
        if FAILED_LIST.search(line) and not item:
            listing = True
            continue
        if item and (listing or FAILED_ATTEMPT.search(line)):
            tried.append(MARKER.sub("", item.group(1).strip()))
            continue
        if not item and line.strip():
            listing = False
        if FAILED_ATTEMPT.search(line):
            tried.append(MARKER.sub("", line.strip()))
        else:
            kept.append(line)
    return "\n".join(kept), tried


def states_rule(sentence: str) -> bool:
    """Whether ``sentence`` states a rule (``RULE``): not when it asks for a feature
    (``FEATURE_REQUEST``) and holds no ``STRONG_RULE`` word, as "Now a 3-day forecast with
    --days 3 (max 7)." (a request, which the goal and Pending carry, not a constraint)."""
    if not RULE.search(sentence):
        return False
    return not FEATURE_REQUEST.match(sentence) or STRONG_RULE.search(sentence) is not None


def decisions_in(text: str, later_request: bool) -> list[str]:
    """The sentences of ``text`` that state a decision; of a later request of the user, also
    those that state a rule or a choice; a sentence that reports an attempt failed is none."""
    if later_request and may_hold(DECISION_WORDS + RULE_WORDS + USER_CHOICE_WORDS, text):
        return [
            s
            for s in sentences(text)
            if DECISION.search(s) or states_rule(s) or USER_CHOICE.search(s)
        ]
    if may_hold(DECISION_WORDS, text):
        return [s for s in sentences(text) if DECISION.search(s) and not FAILED_ATTEMPT.search(s)]
    return []


def may_hold(words: Sequence[str], text: str) -> bool:
    """Whether a sentence of ``text`` may hold one of ``words`` (lower case): a sentence that
    does is part of a text that does, unless a code block ``sentences`` leaves out joined it."""
    if "```" in text:
        return True
    low = text.lower()
    return any(word in low for word in words)


# How every answer of the offline agent begins (``host.agent`` writes them; the handoff core
# cannot import the host): acknowledgements, not the work's state, so the brief skips them.
OFFLINE_AGENT = "Offline agent:"
# How the offline agent acknowledges the brief a successor is seeded with.
BRIEF_RECEIVED = f"{OFFLINE_AGENT} received the handoff brief."


def acknowledges(text: str) -> bool:
    """Whether an assistant ``text`` is the offline agent's acknowledgement (``OFFLINE_AGENT``):
    it did no work, so it neither answers a request nor tells the work's state."""
    return text.lstrip().startswith(OFFLINE_AGENT)
