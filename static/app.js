// Page behaviours of the chat (the follower lives in follower/static/follower/follower.js; the
// handoff's panel, review form and settings card bring their own: handoff/static/handoff/,
// handoff_settings/static/handoff_settings/).
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
