// The page-wide follower's transport (docs/spec.md, Follower rules). It knows no
// domain: the jump rules (a tab on a handed-off conversation opens its successor) are the
// handoff's, in handoff/static/handoff/jump.js, loaded after this module.
//
// Loaded on every page ({% follower_scripts %} in the host's base template). The page was
// rendered with a baseline (body data-event-id: the newest event id when the server rendered
// it); the follower says hello with that id and the server replays every later event, so
// nothing falls between the render and
// the socket. Rules:
// - events carry what they change, rendered on the server (follower/fragments.py): the
//   page's fragments (payload.fragments) are swapped in by htmx out of band; what else a
//   payload carries is for the apps' scripts (the host's session list places payload.row_html:
//   static/chat-rows.js). Nothing is refetched here: after a resync the apps' scripts fetch
//   what the pruned events would have shown;
// - heartbeat: a ping every heartbeatInterval ms; no answer within heartbeatTimeout ms means
//   the socket is dead (or half-open): close it and reconnect. The pong carries the newest
//   event id the server knows of: a higher one than the page applied means events were lost
//   on the way (a channel-layer outage), and the page says hello again to have them replayed;
// - reconnect with exponential backoff, sending the last applied id; on "resync" read a fresh
//   snapshot (a read that fails, or has no answer within fetchTimeout ms, reconnects and
//   reads again).
//
// The page's follower object, window.follower (as htmx is window.htmx), and its API:
// - follower.on(kind, handler) / follower.off(kind, handler): handler({id, kind, payload}) for
//   each event of that kind ("*": every kind), once its fragments are in the page; handlers run
//   in the order they subscribed (the scripts load in FOLLOWER_SOURCES order); on returns the
//   handler. follower.before(kind, handler): the same, before the event is applied (a script
//   that moves the tab decides there: a page that leaves swaps nothing more in);
// - follower.hold() keeps the events' changes from the page until follower.release() (a page
//   about to be left); the events still arrive (before);
// - follower.leave(url) moves the tab: it stops following, then brings the page of url in place,
//   or opens it (state().followed is true on the page shown); follower.ahead(url) asks for that
//   page early, when a script knows it before the move;
// - follower.provide(name, value) / follower.provided(name) (null when none): what one app's
//   script offers another's; the host's session list provides "sessionList":
//   {refresh(): a promise resolved once the new rows are in, hold(held: boolean): the list is
//   another script's for now (no refresh of its own), row(sessionId): {url, title, blank} or
//   null when the list does not show that session};
// - follower.state(): a read-only copy {connection: "connecting" | "connected" | "unavailable",
//   lastId: the newest event id applied (null: none yet), loaded: the page's baseline is known,
//   followed: the page shown was brought by a move}; for tests and diagnostics;
// - follower.config: the settings below, merged with window.__followerConfig when a test sets
//   it before the page loads.
// DOM events on document, for what concerns the page rather than one kind of event:
// "follower:status" {state: "connected" | "unavailable"}; "follower:event" {id, kind, payload}
// after the handlers of its kind ran; "follower:snapshot" {snapshot, covered: the queued events
// the snapshot already reflects}, before the queued events are applied; "follower:resync" when
// events were missed (what they would have shown fetches itself: the apps' scripts listen);
// "follower:page" {url} after a move swapped another page in: the scripts set the new page up
// as they do on load.

const config = {
  socketPath: "/ws/follow/",
  snapshotUrl: "/follow/snapshot",
  retryInterval: 2000,
  holdLimit: 1000, // ms a page waiting to be left holds what events change (the jump's hold)
  retryLimit: 12,
  backoffBase: 500,
  backoffCap: 10000,
  heartbeatInterval: 10000,
  heartbeatTimeout: 10000,
  // ms a fetch of the follower's waits for its whole answer (the page a move brings in place,
  // the snapshot; the host's list refresh too) before it gives up: a page that did not come is
  // opened by navigation instead, a snapshot read again after a reconnect. A page renders in
  // tens of ms, and in under a second with five tabs on two loaded cores; what hangs longer is
  // a dead connection (half-open: no FIN closed it), which the abort closes, so what follows
  // goes over a new one. A timeout that cuts a slow but live answer costs one request more.
  fetchTimeout: 5000,
  ...(window.__followerConfig || {}),
};

const UNAUTHENTICATED = 4401;
const ALL = "*";
const before = []; // [kind, handler]: run before an event of that kind is applied
const after = []; // [kind, handler]: run once its fragments are in the page
const provisions = new Map(); // name → what a script provides (follower.provide)

function subscribe(table, kind, handler) {
  if (typeof handler !== "function") throw new TypeError(`follower: a handler for ${kind}`);
  table.push([kind, handler]);
  return handler;
}

function unsubscribe(table, kind, handler) {
  const index = table.findIndex(([k, h]) => k === kind && h === handler);
  if (index !== -1) table.splice(index, 1);
}

// The handlers of the frame's kind or of every kind, in the order they subscribed; one that
// throws is reported and the others still run (as DOM event listeners do).
function notify(table, frame) {
  for (const [kind, handler] of [...table]) {
    if (kind !== frame.kind && kind !== ALL) continue;
    try {
      handler(frame);
    } catch (error) {
      reportError(error);
    }
  }
}

const follower = Object.freeze({
  config,
  on: (kind, handler) => subscribe(after, kind, handler),
  before: (kind, handler) => subscribe(before, kind, handler),
  off(kind, handler) {
    unsubscribe(before, kind, handler);
    unsubscribe(after, kind, handler);
  },
  hold,
  release,
  leave,
  ahead,
  provide(name, value) {
    provisions.set(name, value);
  },
  provided: (name) => provisions.get(name) ?? null,
  state: () => ({ connection, lastId, loaded, followed }),
});
window.follower = follower;

let connection = "connecting"; // the socket's state (follower:status)
let lastId = null; // the newest event id applied
let followed = false; // the page shown was brought by a move (leave)
let socket = null; // the socket this page listens to

// What the page shown was rendered with (read again when a move swaps another page in).
let body; // the body's dataset: the signed-in user, the session shown, the baseline
let current; // the session the page shows, or null
let loaded; // the baseline is known (rendered, or read from a snapshot)
let pending; // events that arrived before the snapshot
let stale; // a resync came: the page may lack what the pruned events told
let failures = 0; // consecutive failed connections, for the backoff
let heartbeat = null; // the interval timer of this socket's pings
let awaiting = null; // the timer that declares the socket dead when no pong comes
let reconnect = null; // the timer of the next connection after a close
let leaving = false; // the page is being left: it applies no more events
let held = null; // the events held back while the page is likely to be left (hold)
let opening = null; // the pending open of a page's socket, brought in place (visit)

function readPage() {
  body = document.body.dataset;
  current = body.sessionId || null;
  lastId = body.eventId ? Number(body.eventId) : null;
  loaded = lastId !== null;
  pending = [];
  stale = false;
  leaving = false;
  held = null;
}

function setState(state) {
  if (connection === state) return;
  connection = state;
  document.dispatchEvent(new CustomEvent("follower:status", { detail: { state } }));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  // The server refuses (4401) a page rendered for someone else than who is signed in now.
  const user = encodeURIComponent(body.userId);
  const opened = new WebSocket(`${scheme}://${location.host}${config.socketPath}?user=${user}`);
  socket = opened;
  opened.onopen = () => {
    hello(opened);
    heartbeat = setInterval(() => ping(opened), config.heartbeatInterval);
  };
  opened.onmessage = (message) => {
    clearTimeout(awaiting); // any frame shows the socket is alive
    awaiting = null;
    receive(JSON.parse(message.data));
  };
  opened.onclose = (close) => closed(close.code);
}

// Ask for every event after the last one applied (answered by them, then "ready" or "resync").
function hello(socket) {
  socket.send(JSON.stringify({ type: "hello", last_event_id: lastId }));
}

function closed(code) {
  clearInterval(heartbeat);
  clearTimeout(awaiting);
  awaiting = null;
  setState("unavailable");
  if (code === UNAUTHENTICATED) return;
  const delay = Math.min(config.backoffCap, config.backoffBase * 2 ** failures);
  failures += 1;
  reconnect = setTimeout(connect, delay);
}

// The heartbeat: a socket that answers nothing in time is dead or half-open (no FIN ever
// came, and the browser may not notice for minutes): stop listening to it, close it and
// reconnect, which replays from the last applied id.
function ping(socket) {
  if (awaiting !== null) return;
  socket.send(JSON.stringify({ type: "ping" }));
  awaiting = setTimeout(() => {
    stopListening(socket);
    closed(1006);
  }, config.heartbeatTimeout);
}

// Close a socket this page no longer hears: nothing it still sends is applied, and its close
// starts no reconnect.
function stopListening(socket) {
  socket.onclose = null;
  socket.onmessage = null;
  socket.close();
}

function receive(frame) {
  if (frame.type === "ready" || frame.type === "resync") {
    failures = 0;
    setState("connected");
    if (frame.type === "resync") stale = true;
    if (frame.type === "resync" || !loaded) {
      lastId = Math.max(lastId ?? 0, frame.last_event_id);
      loadSnapshot();
    }
  } else if (frame.type === "event") {
    if (loaded) apply(frame);
    else pending.push(frame);
  } else if (frame.type === "pong") {
    if (loaded && frame.last_event_id > (lastId ?? 0)) hello(socket);
  } else if (frame.type === "error") {
    console.warn("follower:", frame.detail);
  }
}

async function loadSnapshot() {
  loaded = false;
  try {
    const response = await fetch(config.snapshotUrl, {
      headers: { Accept: "application/json" },
      signal: AbortSignal.timeout(config.fetchTimeout),
    });
    if (!response.ok) throw new Error(`snapshot: HTTP ${response.status}`);
    const snapshot = await response.json();
    const queued = pending;
    pending = [];
    // Events that came after subscribing but are already in the snapshot: the page has not
    // shown them; the other scripts learn which (a transition this page saw happen).
    const covered = queued.filter((frame) => frame.id <= snapshot.last_event_id);
    if (covered.length) stale = true;
    lastId = Math.max(lastId ?? 0, snapshot.last_event_id);
    document.dispatchEvent(new CustomEvent("follower:snapshot", { detail: { snapshot, covered } }));
    loaded = true;
    queued.forEach(apply);
    if (stale) {
      stale = false;
      // What the pruned events would have brought: the apps' scripts fetch their parts.
      document.dispatchEvent(new CustomEvent("follower:resync"));
    }
  } catch (error) {
    console.warn("follower:", error);
    socket.close(); // reconnect with backoff; the next "ready" reads it again
  }
}

function apply(frame) {
  if (leaving || frame.id <= lastId) return;
  lastId = frame.id;
  // A script that moves the tab on this event (the handoff's jump) decides first: a page that
  // leaves does not swap in, and lay out, what it will no longer show.
  notify(before, frame);
  if (leaving) return;
  if (held !== null) held.push(frame);
  else show(frame);
}

function show(frame) {
  applyFragments(frame.payload.fragments);
  notify(after, frame);
  document.dispatchEvent(new CustomEvent("follower:event", { detail: frame }));
}

// A page likely to be left in a moment (the handoff's source, waiting for its successor to
// start) holds what the events bring instead of laying it out: on five tabs sharing two cores,
// a long log laid out and painted again just before the move held the new page's first frame
// back by up to a second. The events still arrive (follower.before); release()
// shows what was held, in order; a move drops it.
function hold() {
  held ??= [];
}

function release() {
  const frames = held ?? [];
  held = null;
  frames.forEach(show);
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

// Moving this tab (another script's rule, e.g. the handoff's jump): stop following first, so a
// leaving page spends nothing on events it will not show, and ask for the page marked as
// followed: the server lets the browser's other tabs that follow the same move share one render
// of it (common/caching.py). The page comes in place (visit): its body replaces this one, its
// address is pushed, the scripts set it up ("follower:page") and, once the page is drawn, a
// new socket says hello with its baseline, as a page load would, without the document
// teardown and script start-up a navigation costs every tab. Anything unexpected
// (an error, a redirect to sign in, another user, other scripts or styles, no page within
// fetchTimeout ms) opens the page by navigation instead; that page removes the mark from its
// address (unmark). Back and Forward load what the address names.
const FOLLOWED = "followed";
const ASSETS = "script[src], link[rel=stylesheet]";

let early = null; // {href, page: a promise of the parsed page} asked for ahead of a move

// Ask now for a page this tab is likely to move to (the handoff's successor, before it starts);
// a move to it then uses this answer. The page replays what happened after its render.
function ahead(url) {
  const target = marked(url);
  if (early?.href === target.href) return;
  early = { href: target.href, page: fetchPage(target) };
  early.page.catch(() => {}); // a failed ask is retried by the move itself, one timed out not
}

async function leave(url) {
  leaving = true;
  opening = null;
  clearInterval(heartbeat);
  clearTimeout(awaiting);
  clearTimeout(reconnect);
  if (socket) stopListening(socket);
  const target = marked(url);
  const asked = early?.href === target.href ? early.page : null;
  early = null;
  try {
    visit(await (asked?.catch((error) => again(error, target)) ?? fetchPage(target)), url);
  } catch (error) {
    console.warn("follower: opening the page instead:", error);
    location.assign(target);
  }
}

function marked(url) {
  const target = new URL(url, location.href);
  target.searchParams.set(FOLLOWED, "1");
  return target;
}

// A failed ask ahead is asked again; one that timed out is not: the move waited long enough
// for it, and the page opens by navigation at once.
function again(error, target) {
  if (error.name === "TimeoutError") throw error;
  return fetchPage(target);
}

// The page at target, parsed; rejects when it is not one this tab can show in place, or when
// it has not fully come within fetchTimeout ms (a TimeoutError: the fetch is aborted).
async function fetchPage(target) {
  const signal = AbortSignal.timeout(config.fetchTimeout);
  const response = await fetch(target, { headers: { Accept: "text/html" }, signal });
  const type = response.headers.get("Content-Type") || "";
  if (!response.ok || response.redirected || !type.startsWith("text/html")) {
    throw new Error(`HTTP ${response.status} ${response.url}`);
  }
  const page = new DOMParser().parseFromString(await response.text(), "text/html");
  if (page.body.dataset.userId !== body.userId) throw new Error("another user signed in");
  if (assets(page) !== assets(document)) throw new Error("the page loads other assets");
  return page;
}

function assets(page) {
  const named = (element) => element.getAttribute("src") || element.getAttribute("href");
  return Array.from(page.head.querySelectorAll(ASSETS), named).join(" ");
}

function visit(page, url) {
  document.title = page.title;
  document.documentElement.lang = page.documentElement.lang;
  document.body.replaceWith(page.body);
  history.pushState({ followed: true }, "", new URL(url, location.href));
  window.scrollTo(0, 0);
  readPage();
  followed = true;
  shown = here();
  window.htmx?.process(document.body);
  document.dispatchEvent(new CustomEvent("follower:page", { detail: { url: location.href } }));
  connectAfterFirstFrame();
}

// The new page's socket opens once its first frame is drawn, as after a page load: the replay
// it starts (what happened since the page's render) then queues behind no tab's first frame;
// on five tabs sharing two cores, their sockets' start-up ahead of their frames held the last
// tab's frame back. A hidden tab draws no frames: FIRST_FRAME_LIMIT ms at most. A
// move before then (leave) drops the pending open: the next page opens its own.
const FIRST_FRAME_LIMIT = 100;

function connectAfterFirstFrame() {
  const pending = {};
  opening = pending;
  const open = () => {
    if (opening !== pending) return;
    opening = null;
    connect();
  };
  requestAnimationFrame(() => setTimeout(open));
  setTimeout(open, FIRST_FRAME_LIMIT);
}

function unmark() {
  const address = new URL(location.href);
  if (!address.searchParams.has(FOLLOWED)) return;
  address.searchParams.delete(FOLLOWED);
  history.replaceState(history.state, "", address);
  followed = true;
}

function here() {
  return location.pathname + location.search;
}

// The address Back or Forward lands on names another page than the one shown (a visit
// swapped it in): load it. A move within the page (#entry-N) changes nothing.
let shown;
window.addEventListener("popstate", () => {
  if (here() !== shown) location.reload();
});

readPage();
unmark();
shown = here();
if (body.userId) connect();
