// The page-wide follower (seed 003 §6.5, defects B and C; DESIGN.md invariants 10–11).
//
// Loaded by base.html on every page, so the auto-jump works whatever page is open. It
// subscribes first (websocket /ws/follow/, hello → ready), then reads its snapshot, then applies
// events in id order. Rules:
// - baseline: the first sight of a session records its redirect and does nothing; only a
//   transition from none to a destination acts (a page opened on a session that was already
//   handed off stays). The baseline lives as long as the page, across reconnects;
// - a page showing the source refreshes the session list, then opens the successor once its row
//   is there and not blank; otherwise it tries again (retryInterval ms apart, retryLimit tries)
//   and then gives up quietly. Other pages only refresh their session list;
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
  ...(window.__followerConfig || {}),
};

const UNAUTHENTICATED = 4401;
const current = document.body.dataset.sessionId || null;
const follower = { state: "connecting", tries: 0, jump: null, lastId: null, baseline: {} };
window.__follower = follower;

let loaded = false; // the snapshot of this page load has been read
let pending = []; // events that arrived before the snapshot
let stale = false; // a resync came: the session list may lack what the pruned events told
let failures = 0; // consecutive failed connections, for the backoff

function setState(state) {
  if (follower.state === state) return;
  follower.state = state;
  document.dispatchEvent(new CustomEvent("follower:status", { detail: { state } }));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  // The server refuses (4401) a page rendered for someone else than who is signed in now.
  const user = encodeURIComponent(document.body.dataset.userId);
  const socket = new WebSocket(`${scheme}://${location.host}${config.socketPath}?user=${user}`);
  follower.socket = socket;
  socket.onopen = () => {
    socket.send(JSON.stringify({ type: "hello", last_event_id: follower.lastId }));
  };
  socket.onmessage = (message) => receive(JSON.parse(message.data));
  socket.onclose = (close) => {
    setState("unavailable");
    if (close.code === UNAUTHENTICATED) return;
    const delay = Math.min(config.backoffCap, config.backoffBase * 2 ** failures);
    failures += 1;
    setTimeout(connect, delay);
  };
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
      if (follower.jump !== "retrying") refreshSessionList().catch(() => {});
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
  if (frame.kind === "session.added" || frame.kind === "session.updated") {
    see(payload.session.id, payload.session.redirect_to);
  } else if (frame.kind === "redirect.committed") {
    see(payload.source, payload.destination);
  } else {
    return;
  }
  if (follower.jump !== "retrying") refreshSessionList().catch(() => {});
}

// The baseline rule: record the first sight, act only on none → destination.
function see(sessionId, redirectTo) {
  const known = Object.hasOwn(follower.baseline, sessionId);
  const before = follower.baseline[sessionId];
  follower.baseline[sessionId] = redirectTo || null;
  if (known && !before && redirectTo && sessionId === current) startJump();
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

function startJump() {
  if (follower.jump === "retrying") return;
  follower.jump = "retrying";
  follower.tries = 0;
  tryOpen();
}

// The retry rule: refresh the list first (the server recomputes blank), open only a row that
// is there and not blank, give up quietly after retryLimit tries.
async function tryOpen() {
  follower.tries += 1;
  const target = destination();
  try {
    await refreshSessionList();
  } catch (error) {
    console.warn("follower:", error);
  }
  const row = document.querySelector(`#session-list .session-row[data-session-id="${target}"]`);
  if (row && row.dataset.blank !== "true") {
    follower.jump = "opening";
    location.assign(row.getAttribute("href") || `/s/${target}/`);
  } else if (follower.tries >= config.retryLimit) {
    follower.jump = "gave-up";
  } else {
    setTimeout(tryOpen, config.retryInterval);
  }
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

if (document.body.dataset.userId) connect();
