// The handoff's jump rules (docs/spec.md, Follower rules), over the page-wide follower's
// transport (follower/static/follower/follower.js, loaded before this module: window.follower,
// its before/on subscriptions and its "follower:snapshot" event).
//
// - baseline: the page was rendered with where its session led (body data-redirect-to); only a
//   transition of the current session from no redirect to a destination acts (a page rendered
//   on a session that was already handed off stays). The baseline lives as long as the page,
//   across reconnects;
// - a page showing the source opens the successor as soon as it is started: at once when the
//   redirect event carries a started (not blank) row, else on the event that starts it. When
//   no such event comes, the seed's rule: refresh the session list, open the row once it is
//   there and not blank, else try again (retryInterval ms apart, retryLimit tries), then give
//   up quietly. Other pages only update their session list (the transport does);
// - a page whose unsent text (the field marked data-handoff-draft: the host's composer; not
//   while its form sends it) is not empty does not move: it shows a banner linking to the
//   successor, first in the page's <main>; a page that moved says so on the next page
//   ("Moved here from …", aria-live), naming the conversation as the person knew it: the title
//   its redirect event carries from before the handoff renamed it (payload.source_title), else
//   the heading marked data-handoff-title;
// - after a resync the handoff panel fetches itself ("handoff:refresh");
// - the successor's page is the URL its redirect event names (payload.url: the host's
//   HANDOFF_SESSION_URL); one this page saw no event for is this page's URL with the session's
//   id in place of the current one. The session list (follower.provided("sessionList"), when
//   the host's page has one) is what the retry rule refreshes and reads the row from.
// The jump's state, for tests: the root element's data-handoff-jump ("waiting", "retrying",
// "opening", "held", "gave-up"; absent when none) and data-handoff-tries.

const follower = window.follower;
const config = follower.config;
const root = document.documentElement.dataset;
let jump = null; // the jump's state (setJump)
let tries = 0; // the retry rule's tries so far (root.handoffTries)
let baseline; // where each session seen led when first seen, by session id
let current; // the session the page shows
let pages; // the successors' page URLs, by session id, from their redirect events
let knownAs; // the sources' titles before their handoffs renamed them, by session id

// The page's baseline, on load and when a move brought another page in ("follower:page").
function readPage() {
  const body = document.body.dataset;
  current = body.sessionId || null;
  pages = {};
  knownAs = {};
  setJump(null);
  setTries(0);
  baseline = {};
  if (current && body.eventId) baseline[current] = body.redirectTo || null;
  announceMove();
}

document.addEventListener("follower:page", readPage);

// The transport refreshes the session list itself unless the jump drives it (retrying) or the
// page is leaving (opening).
function setJump(state) {
  jump = state;
  if (state === null) delete root.handoffJump;
  else root.handoffJump = state;
  follower.provided("sessionList")?.hold(state === "retrying" || state === "opening");
  if (state !== "waiting" && state !== "opening") follower.release();
}

function setTries(count) {
  tries = count;
  root.handoffTries = String(count);
}

document.addEventListener("follower:snapshot", (event) => {
  const { snapshot, covered } = event.detail;
  // Events already in the snapshot are transitions this page saw happen: where a redirect led
  // before them is the baseline, not the snapshot.
  for (const frame of covered) {
    if (frame.kind !== "redirect.committed") continue;
    const { source, previous } = frame.payload;
    remember(frame.payload);
    if (previous !== undefined && !Object.hasOwn(baseline, source)) {
      baseline[source] = previous;
    }
  }
  for (const row of snapshot.sessions || []) see(row.id, row.redirect_to);
});

document.addEventListener("follower:resync", () => {
  document.body.dispatchEvent(new CustomEvent("handoff:refresh"));
});

// Before the event's fragments go in: a page that opens the successor now swaps in nothing more.
function sessionSeen({ payload }) {
  see(payload.session.id, payload.session.redirect_to);
  const jumping = jump === "waiting" || jump === "retrying";
  if (jumping && payload.session.id === destination()) {
    openIfStarted(payload.session);
  }
}

follower.before("session.added", sessionSeen);
follower.before("session.updated", sessionSeen);
follower.before("redirect.committed", ({ payload }) => {
  pages[payload.destination] = payload.url;
  remember(payload);
  const waiting = jump === "waiting";
  see(payload.source, payload.destination, payload.session);
  // Events are rendered after their commit: the source's row renamed in the route's burst
  // already leads to the successor and started the jump without the successor's row, which
  // this event brings.
  if (waiting && payload.session) meet(payload.session);
});

// The name the source had before its handoff (null: the event did not carry it).
function remember({ source, source_title: title }) {
  if (title !== null && title !== undefined) knownAs[source] = title;
}

// Once the source's summary is prepared its route comes next, and the route renames the source
// (its heading, its row) in the same burst as the redirect, before this page learns that it
// moves: from then on the page holds what events change (follower.js, hold), for at most
// holdLimit unless the jump takes over.
follower.on("handoff.phase", ({ payload }) => {
  if (payload.source === current && payload.phase === "prepared") holdAWhile();
});

// Hold what events change while this page is likely to be left (follower.js, hold): a page
// still here after holdLimit (a late start, the seed's retries next) shows what it held.
function holdAWhile() {
  follower.hold();
  setTimeout(() => {
    if (jump !== "opening") follower.release();
  }, Math.min(config.holdLimit, config.retryInterval));
}

// The baseline rule: record the first sight, act only on none → destination.
function see(sessionId, redirectTo, row) {
  const known = Object.hasOwn(baseline, sessionId);
  const before = baseline[sessionId];
  baseline[sessionId] = redirectTo || null;
  if (known && !before && redirectTo && sessionId === current) startJump(row);
}

// Where the current session's redirects lead, following the chain as far as it is known.
function destination() {
  const seen = new Set([current]);
  let id = baseline[current];
  while (baseline[id] && !seen.has(id)) {
    seen.add(id);
    id = baseline[id];
  }
  return id;
}

// The event carried the successor's row: open it when started, else wait for its start and
// fall back on the seed's refresh-and-retry when that does not come in time.
function startJump(row) {
  if (["retrying", "opening", "held"].includes(jump)) return;
  setTries(0);
  if (row && openIfStarted(row)) return;
  setJump("waiting");
  if (row) askAhead(row);
  holdAWhile();
  setTimeout(() => {
    if (jump === "waiting") {
      setJump("retrying");
      tryOpen();
    }
  }, config.retryInterval);
}

// The successor's row came: open it when started, else ask for its page ahead.
function meet(row) {
  if (!openIfStarted(row)) askAhead(row);
}

// The successor's page holds its brief already: its render starts now, while the successor
// starts, and the page it brings in replays the start (follower.js, ahead).
function askAhead(row) {
  if (row.id === destination() && !row.archived) follower.ahead(pageOf(row.id));
}

function openIfStarted(row) {
  if (row.id !== destination() || row.blank || row.archived) return false;
  open(pageOf(row.id), row.title);
  return true;
}

function pageOf(sessionId) {
  return pages[sessionId] || location.pathname.replace(current, sessionId);
}

// Opening the successor. A tab whose composer holds unsent text stays (the text would be
// lost): it shows a banner linking to the successor instead (the old conversation still
// forwards what is sent). Otherwise the page moves and the next page announces the move
// (aria-live): "Moved here from …".
const MOVED_KEY = "follower-moved-from";
// Strings in the page's language: Django's JavaScript catalog (gettext).
const untitled = gettext("Untitled conversation");

// The name the next page announces: the title this conversation had before its handoff (its
// heading carries the handed-off tag by now); the heading as shown when no redirect event
// named it (a page that only saw a snapshot without it).
function movedFrom() {
  if (Object.hasOwn(knownAs, current)) return knownAs[current];
  const heading = document.querySelector("[data-handoff-title]");
  return heading ? heading.textContent.trim() : document.title;
}

// A conversation's title in a sentence: the user's words, marked so that translation (and the
// Chinese pages' checks) leave it alone; ``fallback`` (already in the page's language) when it
// has none.
function titleText(title, fallback) {
  if (!title) return fallback;
  const span = document.createElement("span");
  span.translate = false;
  span.textContent = title;
  return span;
}

// Text its form is sending now (htmx's request class on the form) is sent, not unsent: a
// "/handoff commit" typed in the composer installs the route before its answer empties the field.
function unsentText() {
  const field = document.querySelector("[data-handoff-draft]");
  if (field === null || field.value.trim() === "") return false;
  return !field.form?.classList.contains("htmx-request");
}

function open(url, title) {
  if (unsentText()) {
    setJump("held");
    holdBanner(url, title);
    return;
  }
  setJump("opening");
  sessionStorage.setItem(MOVED_KEY, movedFrom());
  follower.leave(url);
}

function holdBanner(url, title) {
  if (document.getElementById("follow-held")) return;
  const banner = document.createElement("div");
  banner.id = "follow-held";
  banner.className = "banner follow-held";
  banner.setAttribute("role", "status");
  const link = document.createElement("a");
  link.href = url;
  link.append(titleText(title, gettext("its successor")));
  const [before, after] = gettext("This conversation continues in %(link)s.").split("%(link)s");
  banner.append(before ?? "", link, after ?? "");
  banner.append(" ", gettext("Your unsent text stays here; what you send here is forwarded."));
  const main = document.querySelector("main") || document.body;
  main.prepend(banner);
}

function announceMove() {
  const from = sessionStorage.getItem(MOVED_KEY);
  if (from === null) return;
  sessionStorage.removeItem(MOVED_KEY);
  const region = document.createElement("p");
  region.id = "follow-moved";
  region.className = "follow-moved";
  region.setAttribute("aria-live", "polite");
  region.setAttribute("role", "status");
  document.body.prepend(region);
  // Filled once the region is in the page, so screen readers announce the change.
  setTimeout(() => {
    const [before, after] = gettext("Moved here from “%(from)s”.").split("%(from)s");
    region.replaceChildren(before ?? "", titleText(from, untitled), after ?? "");
  }, 100);
}

readPage();

// The retry rule: refresh the list first (the server recomputes blank), open only a row that
// is there and not blank, give up quietly after retryLimit tries.
async function tryOpen() {
  if (jump !== "retrying") return;
  setTries(tries + 1);
  const target = destination();
  const list = follower.provided("sessionList");
  try {
    if (list) await list.refresh();
  } catch (error) {
    console.warn("follower:", error);
  }
  if (jump !== "retrying") return;
  const row = list?.row(target);
  if (row && !row.blank) {
    open(row.url || pageOf(target), row.title);
  } else if (tries >= config.retryLimit) {
    setJump("gave-up");
  } else {
    setTimeout(tryOpen, config.retryInterval);
  }
}
