// Page behaviours of the chat and the settings card (the follower lives in follower/static/follower/follower.js).
// Strings people read go through Django's JavaScript catalog (gettext, loaded by base.html).

// What each page sets up runs when it loads and when the follower brings another page in place
// (a handoff's successor: "follower:page", follower/static/follower/follower.js).
function onPage(setup) {
  document.addEventListener("DOMContentLoaded", setup);
  document.addEventListener("follower:page", setup);
}

// The composer sends on Enter; Shift+Enter adds a line.
document.addEventListener("keydown", (event) => {
  const field = event.target;
  if (!(field instanceof HTMLTextAreaElement) || !field.form || field.form.id !== "composer") return;
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  if (field.value.trim()) field.form.requestSubmit();
});

// The settings card's status channel: the follower reports the websocket's state
// ({detail: {state: "connected" | "unavailable"}}). With no status channel service the card
// stays "unavailable" (data-service="missing").
document.addEventListener("follower:status", (event) => {
  const badge = document.getElementById("status-channel");
  if (!badge || badge.dataset.service === "missing") return;
  const connected = event.detail && event.detail.state === "connected";
  badge.dataset.state = connected ? "connected" : "unavailable";
  badge.textContent = connected ? gettext("status channel connected") : gettext("status channel unavailable");
});

// The conversation opens at its latest message and keeps following new ones while the reader
// is at the end (a reader scrolled up to older messages is left where they are).
const END_SLACK_PX = 80;
let readerAtEnd = true;

function conversationScroller() {
  return document.getElementById("timeline") ? document.querySelector(".main") : null;
}

function scrollToEnd() {
  const scroller = conversationScroller();
  if (scroller) scroller.scrollTop = scroller.scrollHeight;
}

// A link to one entry ("(log #N)" in a brief: …?all=1#entry-N) opens the log at that entry,
// not at its end; the entry is marked (:target) and clears the sticky panel, however tall.
function openAtTarget() {
  readerAtEnd = true;
  const target = location.hash.startsWith("#entry-") && document.getElementById(location.hash.slice(1));
  if (!target) return scrollToEnd();
  readerAtEnd = false;
  const panel = document.getElementById("handoff-panel");
  const sticky = panel && getComputedStyle(panel).position === "sticky";
  if (sticky) target.style.scrollMarginTop = `${panel.offsetHeight + 16}px`;
  target.scrollIntoView({ block: "start" });
}

onPage(openAtTarget);
// Where the reader is is read when they scroll, and the log follows its end once per frame: a
// swap's own handlers read no layout (that forced a layout of the whole log per event, on every
// open tab, as a handoff's events came in).
document.addEventListener(
  "scroll",
  (event) => {
    const scroller = conversationScroller();
    if (!scroller || event.target !== scroller) return;
    readerAtEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < END_SLACK_PX;
  },
  { capture: true, passive: true },
);
let endFrame = null;
document.addEventListener("htmx:afterSettle", () => {
  if (!readerAtEnd || endFrame !== null) return;
  endFrame = requestAnimationFrame(() => {
    endFrame = null;
    if (readerAtEnd) scrollToEnd();
  });
});

// A handoff waiting for review shows its form in the panel, often scrolled out of view: a
// notice by the composer says so while the form is on the page; its link brings the form into
// view and puts the focus in its first field.
function reviewForm() {
  return document.getElementById("handoff-review-form");
}

function showReviewNotice() {
  const notice = document.getElementById("review-notice");
  if (notice) notice.hidden = !reviewForm();
}

onPage(showReviewNotice);
document.addEventListener("htmx:afterSettle", showReviewNotice);
document.addEventListener("htmx:oobAfterSwap", showReviewNotice);
document.addEventListener("click", (event) => {
  const form = reviewForm();
  if (!form || !event.target.closest("#review-notice a")) return;
  event.preventDefault();
  form.scrollIntoView({ block: "start" });
  form.querySelector("input:not([type=hidden]), textarea")?.focus({ preventScroll: true });
});

// Settings fields save on change through htmx; Enter in a field must not also submit the form
// natively (that post carries no CSRF token and would leave the card). Enter commits the value
// (the browser fires "change", which saves it in place) and nothing else happens.
document.addEventListener("submit", (event) => {
  if (event.target instanceof HTMLFormElement && event.target.matches("form.setting")) {
    event.preventDefault();
  }
});

// The last user action wins. A control marked data-last-wins saves through htmx with
// hx-sync "queue last": when it was changed again while its save was in flight, the older
// answer is not swapped in (that would replace the control and drop the queued save); the
// queued save then sends the newer value and its answer is shown.
const CONTROLS = "input:not([type=hidden]), select";

function lastWinsControl(element) {
  if (!(element instanceof Element) || !element.hasAttribute("data-last-wins")) return null;
  return element.matches(CONTROLS) ? element : element.querySelector(CONTROLS);
}

function controlValue(control) {
  return control.type === "checkbox" ? String(control.checked) : control.value;
}

document.addEventListener("htmx:configRequest", (event) => {
  const control = lastWinsControl(event.detail.elt);
  if (!control) return;
  control.dataset.sent = controlValue(control);
  // A switch posts to the action for the state the user left it in (data-on-url / data-off-url).
  if (control.dataset.onUrl && control.dataset.offUrl) {
    event.detail.path = control.checked ? control.dataset.onUrl : control.dataset.offUrl;
  }
});

document.addEventListener("htmx:beforeSwap", (event) => {
  const control = lastWinsControl(event.detail.requestConfig ? event.detail.requestConfig.elt : null);
  if (control && control.isConnected && control.dataset.sent !== controlValue(control)) {
    event.detail.shouldSwap = false;
    adoptRendered(control, event.detail.serverResponse);
  }
});

// The dropped answer still says what is stored now: the queued save carries that as the value
// it was shown (a settings field's "rendered"), so this tab's own earlier save never makes its
// next one look stale.
function adoptRendered(control, html) {
  const shown = control.form && control.form.querySelector("input[name=rendered]");
  if (!shown || typeof html !== "string") return;
  const stored = new DOMParser().parseFromString(html, "text/html").querySelector("input[name=rendered]");
  if (stored) shown.value = stored.value;
}

// The conversation list as a drawer (phones and tablets, static/css/app.css): the button opens
// and closes it, focus moves into it and back to the button; Escape, a tap beside it and
// choosing a conversation close it.
function drawerApp() {
  return document.getElementById("chat-app");
}

function setDrawer(open) {
  const app = drawerApp();
  const toggle = app && app.querySelector(".drawer-toggle");
  if (!toggle) return;
  app.classList.toggle("drawer-open", open);
  toggle.setAttribute("aria-expanded", String(open));
  app.querySelector(".drawer-backdrop").hidden = !open;
  if (open) {
    // Once the drawer is shown (a hidden element takes no focus).
    const first = app.querySelector("#chat-sidebar .is-current, #chat-sidebar a");
    if (first) requestAnimationFrame(() => first.focus());
  } else if (app.contains(document.activeElement) && document.activeElement.closest("#chat-sidebar")) {
    toggle.focus();
  }
}

document.addEventListener("click", (event) => {
  const app = drawerApp();
  if (!app || !(event.target instanceof Element)) return;
  if (event.target.closest(".drawer-toggle")) {
    setDrawer(!app.classList.contains("drawer-open"));
  } else if (event.target.closest(".drawer-backdrop")) {
    setDrawer(false);
  } else if (event.target.closest("#chat-sidebar .session-row")) {
    setDrawer(false);
  }
});

document.addEventListener("keydown", (event) => {
  const app = drawerApp();
  if (event.key === "Escape" && app && app.classList.contains("drawer-open")) setDrawer(false);
});

// Live settings: a "settings.changed" follower event carries the stored values; every field of
// the card shows its new value, and the value it sends back with a save ("rendered") becomes
// the new one. A field being edited (focused) is left alone: its save then carries the old
// value and is refused (409) with the current one shown, instead of overwriting it silently.
// So is a field whose save is in flight: its answer shows what was stored.
document.addEventListener("follower:event", (event) => {
  if (event.detail.kind !== "settings.changed") return;
  // The conversation's panel says whether the global switch holds it back: it reloads.
  if (window.htmx && document.getElementById("handoff-panel")) {
    window.htmx.trigger(document.body, "handoff:refresh");
  }
  for (const [name, value] of Object.entries(event.detail.payload.settings)) {
    const form = document.getElementById(`setting-${name}`);
    const control = form && form.querySelector(CONTROLS);
    if (!control || control === document.activeElement) continue;
    if (form.classList.contains(window.htmx.config.requestClass)) continue;
    if (control.type === "checkbox") control.checked = value === true;
    else control.value = String(value);
    form.querySelector("input[name=rendered]").value = String(value);
  }
});

// The panel answers a refresh by replacing itself (outerHTML). A refresh asked for while the
// panel's own request is in flight is queued by htmx (hx-sync "queue last") on the panel that
// the answer replaces, and dropped with it; one asked for while the new panel is settling finds
// nobody listening. So a refresh is owed from the moment it is asked for until the panel sends
// a request, and the panel, once in place, asks again for one still owed.
let panelRefreshOwed = false;

document.addEventListener("handoff:refresh", () => { panelRefreshOwed = true; }, true);

document.addEventListener("htmx:beforeRequest", (event) => {
  if (event.detail.elt.id === "handoff-panel") panelRefreshOwed = false;
});

document.addEventListener("htmx:afterSettle", (event) => {
  if (event.target.id !== "handoff-panel" || !panelRefreshOwed) return;
  window.htmx.trigger(document.body, "handoff:refresh");
});

// An answer for the panel that comes after the panel left the page (an event's fragment replaced
// it while its refresh or a switch's save was out) is dropped. Swapped into nothing, it would
// still take the live review form out of the page: htmx puts the page's form aside for the
// answer's copy (hx-preserve), finds no copy in the page, and removes the form. The listener is
// the panel's own: an element out of the page no longer reaches document's listeners, and htmx
// takes its own (hx-on) off an element it removes.
function dropAnswerOutOfPage(event) {
  if (!event.currentTarget.isConnected) event.detail.shouldSwap = false;
}

document.addEventListener("htmx:beforeRequest", (event) => {
  const target = event.detail.target;
  if (target && target.id === "handoff-panel") {
    target.addEventListener("htmx:beforeSwap", dropAnswerOutOfPage);
  }
});

// A tab left open after signing out elsewhere: an htmx request is sent to the sign-in page.
// Nothing is swapped in; the page says so, with a link to sign in that comes back here, and
// what was typed in the composer is kept (restored after signing in).
const DRAFT_KEY = "composer-draft:";

function composerField() {
  const form = document.getElementById("composer");
  return form ? form.querySelector("textarea") : null;
}

function showSignedOut() {
  const field = composerField();
  if (field && field.value) sessionStorage.setItem(DRAFT_KEY + location.pathname, field.value);
  if (document.getElementById("signed-out")) return;
  const login = new URL(document.body.dataset.loginUrl || "/accounts/login/", location.href);
  login.searchParams.set("next", location.pathname + location.search);
  const notice = document.createElement("div");
  notice.id = "signed-out";
  notice.className = "signed-out";
  notice.setAttribute("role", "alert");
  notice.append(gettext("You were signed out."), " ");
  const link = document.createElement("a");
  link.href = login.pathname + login.search;
  link.textContent = gettext("Sign in");
  notice.append(link, " ", gettext("to continue; what you typed is kept."));
  document.body.prepend(notice);
}

function signedOut(xhr) {
  if (!xhr || !xhr.responseURL) return false;
  const login = document.body.dataset.loginUrl || "/accounts/login/";
  return new URL(xhr.responseURL).pathname === login;
}

document.addEventListener("htmx:beforeSwap", (event) => {
  if (!signedOut(event.detail.xhr)) return;
  event.detail.shouldSwap = false;
  event.detail.isError = false;
  showSignedOut();
});

onPage(() => {
  const field = composerField();
  const key = DRAFT_KEY + location.pathname;
  const draft = sessionStorage.getItem(key);
  if (field && draft !== null) {
    if (!field.value) field.value = draft;
    sessionStorage.removeItem(key);
  }
});

// The composer's client_id makes a resent post count once. A page opened by following a move
// may be one render shared by several tabs (common/caching.py): each page gets an id of its own
// here (the server's stays for a page without scripts).
onPage(() => {
  const id = document.querySelector('#composer input[name="client_id"]');
  if (!id) return;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  id.value = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
});

// Back or Forward to a page restored from the back-forward cache would show it as it was when
// left (e.g. before a handoff renamed it): load it afresh instead. The pages are also sent
// with Cache-Control: no-store (a followed move's shared render aside, whose address loses its
// mark), so the HTTP cache never serves them stale either.
window.addEventListener("pageshow", (event) => {
  if (event.persisted) location.reload();
});
