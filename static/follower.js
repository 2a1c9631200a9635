// The page-wide follower (seed 003 §6.5, defects B and C; DESIGN.md invariants 10–11).
//
// Loaded by base.html on every page, so the auto-jump works whatever page is open. The page
// was rendered with a baseline (body data-event-id, data-redirect-to: the newest event id and
// where the current session led when the server rendered it); the follower says hello with
// that id and the server replays every later event, so nothing falls between the render and
// the socket. Rules:
// - baseline: only a transition of the current session from no redirect to a destination
//   acts (a page rendered on a session that was already handed off stays). The baseline lives
//   as long as the page, across reconnects;
// - a page showing the source opens the successor as soon as it is started: at once when the
//   redirect event carries a started (not blank) row, else on the event that starts it. When
//   no such event comes, the seed's rule: refresh the session list, open the row once it is
//   there and not blank, else try again (retryInterval ms apart, retryLimit tries), then give
//   up quietly. Other pages only update their session list;
// - a page whose composer holds unsent text does not move: it shows a banner linking to the
//   successor; a page that moved says so on the next page ("Moved here from …", aria-live);
// - events carry what they change, rendered on the server (follower/fragments.py): a session's
//   row (payload.row_html) goes into the session list in place, and the fragments
//   (payload.fragments: the handoff panel, a new log entry, the "working" line) are swapped in
//   by htmx out of band; a tab on the source applies the successor's row before opening it.
//   Nothing is refetched, except the list when a row has no group to go in, and the list, the
//   log and the panel after a resync (conditional requests: 304 when nothing changed);
// - heartbeat: a ping every heartbeatInterval ms; no answer within heartbeatTimeout ms means
//   the socket is dead (or half-open): close it and reconnect. The pong carries the newest
//   event id the server knows of: a higher one than the page applied means events were lost
//   on the way (a channel-layer outage), and the page says hello again to have them replayed;
// - reconnect with exponential backoff, sending the last applied id; on "resync" read a fresh
//   snapshot and compare it with the baseline, so a handoff committed while offline still moves
//   the page, and refresh the session list (the pruned events would have).
// Events for other scripts: "follower:status" {state: "connected" | "unavailable"} and
// "handoff:event" {id, kind, payload}. Tests read window.__follower and may set
// window.__followerConfig before the page loads.

const config = {
  socketPath: "/ws/follow/",
  snapshotUrl: "/follow/snapshot",
  retryInterval: 2000,
  retryLimit: 12,
  backoffBase: 500,
  backoffCap: 10000,
  heartbeatInterval: 10000,
  heartbeatTimeout: 10000,
  refreshDelay: 100,
  ...(window.__followerConfig || {}),
};

const UNAUTHENTICATED = 4401;
const body = document.body.dataset;
const current = body.sessionId || null;
const rendered = body.eventId ? Number(body.eventId) : null;
const follower = { state: "connecting", tries: 0, jump: null, lastId: rendered, baseline: {} };
if (current && rendered !== null) follower.baseline[current] = body.redirectTo || null;
window.__follower = follower;

let loaded = rendered !== null; // the baseline is known (rendered, or read from a snapshot)
let pending = []; // events that arrived before the snapshot
let stale = false; // a resync came: the session list may lack what the pruned events told
let failures = 0; // consecutive failed connections, for the backoff
let heartbeat = null; // the interval timer of this socket's pings
let awaiting = null; // the timer that declares the socket dead when no pong comes

function setState(state) {
  if (follower.state === state) return;
  follower.state = state;
  document.dispatchEvent(new CustomEvent("follower:status", { detail: { state } }));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  // The server refuses (4401) a page rendered for someone else than who is signed in now.
  const user = encodeURIComponent(body.userId);
  const socket = new WebSocket(`${scheme}://${location.host}${config.socketPath}?user=${user}`);
  follower.socket = socket;
  socket.onopen = () => {
    hello(socket);
    heartbeat = setInterval(() => ping(socket), config.heartbeatInterval);
  };
  socket.onmessage = (message) => {
    clearTimeout(awaiting); // any frame shows the socket is alive
    awaiting = null;
    receive(JSON.parse(message.data));
  };
  socket.onclose = (close) => closed(close.code);
}

// Ask for every event after the last one applied (answered by them, then "ready" or "resync").
function hello(socket) {
  socket.send(JSON.stringify({ type: "hello", last_event_id: follower.lastId }));
}

function closed(code) {
  clearInterval(heartbeat);
  clearTimeout(awaiting);
  awaiting = null;
  setState("unavailable");
  if (code === UNAUTHENTICATED) return;
  const delay = Math.min(config.backoffCap, config.backoffBase * 2 ** failures);
  failures += 1;
  setTimeout(connect, delay);
}

// The heartbeat: a socket that answers nothing in time is dead or half-open (no FIN ever
// came, and the browser may not notice for minutes): stop listening to it, close it and
// reconnect, which replays from the last applied id.
function ping(socket) {
  if (awaiting !== null) return;
  socket.send(JSON.stringify({ type: "ping" }));
  awaiting = setTimeout(() => {
    socket.onclose = null;
    socket.onmessage = null;
    socket.close();
    closed(1006);
  }, config.heartbeatTimeout);
}

function receive(frame) {
  if (frame.type === "ready" || frame.type === "resync") {
    failures = 0;
    setState("connected");
    if (frame.type === "resync") stale = true;
    if (frame.type === "resync" || !loaded) {
      follower.lastId = Math.max(follower.lastId ?? 0, frame.last_event_id);
      loadSnapshot();
    }
  } else if (frame.type === "event") {
    if (loaded) apply(frame);
    else pending.push(frame);
  } else if (frame.type === "pong") {
    if (loaded && frame.last_event_id > (follower.lastId ?? 0)) hello(follower.socket);
  } else if (frame.type === "error") {
    console.warn("follower:", frame.detail);
  }
}

async function loadSnapshot() {
  loaded = false;
  try {
    const response = await fetch(config.snapshotUrl, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`snapshot: HTTP ${response.status}`);
    const snapshot = await response.json();
    const queued = pending;
    pending = [];
    // Events that came after subscribing but are already in the snapshot are transitions this
    // page saw happen: where a redirect led before them is the baseline, not the snapshot.
    for (const frame of queued) {
      if (frame.id > snapshot.last_event_id) continue;
      stale = true; // the session list has not shown them
      const { source, previous } = frame.payload;
      if (frame.kind === "redirect.committed" && previous !== undefined) {
        if (!Object.hasOwn(follower.baseline, source)) follower.baseline[source] = previous;
      }
    }
    follower.lastId = Math.max(follower.lastId ?? 0, snapshot.last_event_id);
    for (const row of snapshot.sessions) see(row.id, row.redirect_to);
    loaded = true;
    queued.forEach(apply);
    if (stale) {
      stale = false;
      if (follower.jump !== "retrying") scheduleRefresh();
      // What the pruned events would have brought: the log and the panel fetch themselves.
      document.dispatchEvent(new CustomEvent("timeline:refresh"));
      document.body.dispatchEvent(new CustomEvent("handoff:refresh"));
    }
  } catch (error) {
    console.warn("follower:", error);
    follower.socket.close(); // reconnect with backoff; the next "ready" reads it again
  }
}

function apply(frame) {
  if (frame.id <= follower.lastId) return;
  follower.lastId = frame.id;
  document.dispatchEvent(new CustomEvent("handoff:event", { detail: frame }));
  const payload = frame.payload;
  applyFragments(payload.fragments);
  if (payload.row_html !== undefined && !placeRow(payload.session, payload.row_html)) {
    if (follower.jump !== "opening") scheduleRefresh();
  }
  if (frame.kind === "session.added" || frame.kind === "session.updated") {
    see(payload.session.id, payload.session.redirect_to);
    const jumping = follower.jump === "waiting" || follower.jump === "retrying";
    if (jumping && payload.session.id === destination()) {
      openIfStarted(payload.session);
    }
  } else if (frame.kind === "redirect.committed") {
    see(payload.source, payload.destination, payload.session);
  }
}

// The fragments of one event, swapped in by htmx out of band: those for this page (no session,
// or the page's own) that the page does not show already ("unless" matches nothing).
function applyFragments(fragments) {
  if (!fragments || !window.htmx) return;
  for (const fragment of fragments) {
    if (fragment.session && fragment.session !== current) continue;
    if (fragment.unless && document.querySelector(fragment.unless)) continue;
    window.htmx.swap(document.body, fragment.html, { swapStyle: "none" });
  }
}

// Put a session's row, as the server rendered it, into the session list: in place of the row
// shown, else first in its workspace's group (the newest); a row the list hides goes away,
// unless it is this page's own. False when it has no group to go in (the list is refetched).
function placeRow(row, html) {
  const list = document.getElementById("session-list");
  if (!list) return true;
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  const item = template.content.firstElementChild;
  const shown = document.getElementById(item.id);
  if (item.dataset.shown !== "true" && row.id !== current) {
    if (shown) shown.remove();
    return true;
  }
  for (const link of item.querySelectorAll(".session-row")) {
    const here = link.dataset.sessionId === current;
    link.classList.toggle("is-current", here);
    if (here) link.setAttribute("aria-current", "page");
    if (here && link.closest(".chain-older")) link.closest(".chain-older").open = true;
  }
  // A chain's row holds its older hops (issue 18 §3): their rows shown elsewhere go away.
  for (const older of item.querySelectorAll("li[id]")) {
    const elsewhere = document.getElementById(older.id);
    if (elsewhere && elsewhere !== shown && !shown?.contains(elsewhere)) elsewhere.remove();
  }
  if (shown && shown.dataset.workspace === item.dataset.workspace) {
    shown.replaceWith(item);
  } else {
    const group = list.querySelector(
      `.session-group[data-workspace="${item.dataset.workspace}"] .session-rows`,
    );
    if (!group) return false;
    if (shown) shown.remove();
    group.prepend(item);
  }
  if (window.htmx) window.htmx.process(item);
  return true;
}

// The baseline rule: record the first sight, act only on none → destination.
function see(sessionId, redirectTo, row) {
  const known = Object.hasOwn(follower.baseline, sessionId);
  const before = follower.baseline[sessionId];
  follower.baseline[sessionId] = redirectTo || null;
  if (known && !before && redirectTo && sessionId === current) startJump(row);
}

// Where the current session's redirects lead, following the chain as far as it is known.
function destination() {
  const seen = new Set([current]);
  let id = follower.baseline[current];
  while (follower.baseline[id] && !seen.has(id)) {
    seen.add(id);
    id = follower.baseline[id];
  }
  return id;
}

// The event carried the successor's row: open it when started, else wait for its start and
// fall back on the seed's refresh-and-retry when that does not come in time.
function startJump(row) {
  if (["retrying", "opening", "held"].includes(follower.jump)) return;
  follower.tries = 0;
  if (row && openIfStarted(row)) return;
  follower.jump = "waiting";
  setTimeout(() => {
    if (follower.jump === "waiting") {
      follower.jump = "retrying";
      tryOpen();
    }
  }, config.retryInterval);
}

function openIfStarted(row) {
  if (row.id !== destination() || row.blank || row.archived) return false;
  open(`/s/${row.id}/`, row.title);
  return true;
}

// Opening the successor. A tab whose composer holds unsent text stays (the text would be
// lost): it shows a banner linking to the successor instead (the old conversation still
// forwards what is sent). Otherwise the page moves and the next page announces the move
// (aria-live): "Moved here from …".
const MOVED_KEY = "follower-moved-from";
// Strings in the page's language: Django's JavaScript catalog (gettext, interpolate).

function unsentText() {
  const field = document.querySelector("#composer textarea");
  return field !== null && field.value.trim() !== "";
}

function open(url, title) {
  if (unsentText()) {
    follower.jump = "held";
    holdBanner(url, title);
    return;
  }
  follower.jump = "opening";
  const from = document.querySelector(".conv-title");
  sessionStorage.setItem(MOVED_KEY, from ? from.textContent.trim() : document.title);
  location.assign(url);
}

function holdBanner(url, title) {
  if (document.getElementById("follow-held")) return;
  const banner = document.createElement("div");
  banner.id = "follow-held";
  banner.className = "banner follow-held";
  banner.setAttribute("role", "status");
  const link = document.createElement("a");
  link.href = url;
  link.textContent = title || gettext("its successor");
  const [before, after] = gettext("This conversation continues in %(link)s.").split("%(link)s");
  banner.append(before ?? "", link, after ?? "");
  banner.append(" ", gettext("Your unsent text stays here; what you send here is forwarded."));
  const main = document.getElementById("main") || document.body;
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
    region.textContent = interpolate(gettext("Moved here from “%(from)s”."), { from }, true);
  }, 100);
}

announceMove();

// The retry rule: refresh the list first (the server recomputes blank), open only a row that
// is there and not blank, give up quietly after retryLimit tries.
async function tryOpen() {
  if (follower.jump !== "retrying") return;
  follower.tries += 1;
  const target = destination();
  try {
    await refreshSessionList();
  } catch (error) {
    console.warn("follower:", error);
  }
  if (follower.jump !== "retrying") return;
  const row = document.querySelector(`#session-list .session-row[data-session-id="${target}"]`);
  if (row && row.dataset.blank !== "true") {
    const title = row.querySelector(".row-title");
    open(row.getAttribute("href") || `/s/${target}/`, title ? title.textContent.trim() : "");
  } else if (follower.tries >= config.retryLimit) {
    follower.jump = "gave-up";
  } else {
    setTimeout(tryOpen, config.retryInterval);
  }
}

// One session-list refresh per burst of events: a refresh asked for while one is scheduled
// or running is folded into the next one.
let refreshTimer = null;
let refreshAgain = false;
function scheduleRefresh() {
  if (refreshTimer !== null) {
    refreshAgain = true;
    return;
  }
  refreshTimer = setTimeout(async () => {
    refreshAgain = false;
    try {
      if (follower.jump !== "retrying") await refreshSessionList();
    } catch (error) {
      console.warn("follower:", error);
    }
    refreshTimer = null;
    if (refreshAgain) scheduleRefresh();
  }, config.refreshDelay);
}

// Fetch the session list fragment (the URL htmx uses) and swap it in; resolves once the
// new rows are in the page. A response overtaken by a later refresh is dropped.
let listVersion = 0;
async function refreshSessionList() {
  const list = document.getElementById("session-list");
  const url = list && list.getAttribute("hx-get");
  if (!url) return;
  const version = ++listVersion;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`session list: HTTP ${response.status}`);
  // Signed out meanwhile: the answer is the sign-in page, not a session list.
  if (response.redirected) throw new Error("session list: signed out");
  const html = await response.text();
  if (version !== listVersion) return;
  list.innerHTML = html;
  if (window.htmx) window.htmx.process(list);
}

if (body.userId) connect();
