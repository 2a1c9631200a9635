// The page-wide follower's transport (seed 003 §6.5; DESIGN.md invariant 10). It knows no
// domain: the jump rules (a tab on a handed-off conversation opens its successor) are the
// handoff's, in handoff/static/handoff/jump.js, loaded after this module.
//
// Loaded by base.html on every page. The page was rendered with a baseline (body
// data-event-id: the newest event id when the server rendered it); the follower says hello with
// that id and the server replays every later event, so nothing falls between the render and
// the socket. Rules:
// - events carry what they change, rendered on the server (follower/fragments.py): a list
//   row (payload.row_html) goes into the session list in place, and the fragments
//   (payload.fragments) are swapped in by htmx out of band. Nothing is refetched, except the
//   list when a row has no group to go in, and the list and the log after a resync
//   (conditional requests: 304 when nothing changed);
// - heartbeat: a ping every heartbeatInterval ms; no answer within heartbeatTimeout ms means
//   the socket is dead (or half-open): close it and reconnect. The pong carries the newest
//   event id the server knows of: a higher one than the page applied means events were lost
//   on the way (a channel-layer outage), and the page says hello again to have them replayed;
// - reconnect with exponential backoff, sending the last applied id; on "resync" read a fresh
//   snapshot (and refresh the session list: the pruned events would have).
// Events for other scripts, on document: "follower:status" {state: "connected" |
// "unavailable"}; "handoff:event" {id, kind, payload} once an event was applied (its fragments
// and row are in the page); "follower:snapshot" {snapshot, covered: the queued events the
// snapshot already reflects}, before the queued events are applied; "follower:resync" when
// events were missed (what they would have shown fetches itself). Other scripts may set
// window.__follower.listHeld (the list is theirs for now: no refresh here), call
// __follower.refreshSessionList(), and move the tab with __follower.leave(url) (it stops
// following, then opens url marked as followed; the next page sets __follower.followed). Tests read window.__follower and may set
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
const follower = { state: "connecting", lastId: rendered, listHeld: false, config };
follower.refreshSessionList = refreshSessionList;
follower.leave = leave;
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
    // Events that came after subscribing but are already in the snapshot: the session list
    // has not shown them; the other scripts learn which (a transition this page saw happen).
    const covered = queued.filter((frame) => frame.id <= snapshot.last_event_id);
    if (covered.length) stale = true;
    follower.lastId = Math.max(follower.lastId ?? 0, snapshot.last_event_id);
    document.dispatchEvent(new CustomEvent("follower:snapshot", { detail: { snapshot, covered } }));
    loaded = true;
    queued.forEach(apply);
    if (stale) {
      stale = false;
      if (!follower.listHeld) scheduleRefresh();
      // What the pruned events would have brought: the log (and other scripts' parts) fetch
      // themselves.
      document.dispatchEvent(new CustomEvent("timeline:refresh"));
      document.dispatchEvent(new CustomEvent("follower:resync"));
    }
  } catch (error) {
    console.warn("follower:", error);
    follower.socket.close(); // reconnect with backoff; the next "ready" reads it again
  }
}

function apply(frame) {
  if (frame.id <= follower.lastId) return;
  follower.lastId = frame.id;
  const payload = frame.payload;
  applyFragments(payload.fragments);
  if (payload.row_html !== undefined && !placeRow(payload.session, payload.row_html)) {
    if (!follower.listHeld) scheduleRefresh();
  }
  document.dispatchEvent(new CustomEvent("handoff:event", { detail: frame }));
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
      if (!follower.listHeld) await refreshSessionList();
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

// Moving this tab (another script's rule, e.g. the handoff's jump): stop following first, so a
// leaving page spends nothing on events it will not show, and open the page marked as followed:
// the server lets the browser's other tabs that follow the same move share one render of it
// (common/caching.py). The page opened removes the mark from its address (unmark), so a reload
// renders anew; its own follower replays what happened since its render.
const FOLLOWED = "followed";

function leave(url) {
  clearInterval(heartbeat);
  clearTimeout(awaiting);
  const socket = follower.socket;
  if (socket) {
    socket.onclose = null;
    socket.onmessage = null;
    socket.close();
  }
  const target = new URL(url, location.href);
  target.searchParams.set(FOLLOWED, "1");
  location.assign(target);
}

function unmark() {
  const here = new URL(location.href);
  if (!here.searchParams.has(FOLLOWED)) return;
  here.searchParams.delete(FOLLOWED);
  history.replaceState(history.state, "", here);
  follower.followed = true;
}

unmark();
if (body.userId) connect();
