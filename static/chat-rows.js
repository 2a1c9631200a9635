// The host's session list over the follower's transport (follower/static/follower/follower.js,
// loaded before this module: window.follower; host.follow.SessionSource.scripts).
//
// - an event that carries a session's row (payload.row_html, rendered by the server with the
//   list's own row template) puts it into the session list in place; the list is refetched
//   when the row has no group to go in (conditional requests: 304 when nothing changed);
// - after a resync ("follower:resync") the list and the log ("timeline:refresh") fetch
//   themselves: the pruned events would have changed them; so does the log when an event says
//   more lines were appended to this page's session than it carries (payload.refresh).
// It provides "sessionList" (follower.provide): refresh() resolves once the new rows are in;
// hold(true) leaves the list to another script for now (no refresh here) until hold(false);
// row(sessionId) is {url, title, blank} of the session's row shown, or null.

const follower = window.follower;
let current = document.body.dataset.sessionId || null;
let held = false; // the list is another script's for now (hold)
follower.provide("sessionList", {
  refresh: refreshSessionList,
  hold(on) {
    held = on;
  },
  row: rowOf,
});

// A move brought another page in: its own session, its own list.
document.addEventListener("follower:page", () => {
  current = document.body.dataset.sessionId || null;
  listVersion += 1;
});

follower.on("*", ({ payload }) => {
  if (payload.row_html !== undefined && !placeRow(payload.session, payload.row_html)) {
    if (!held) scheduleRefresh();
  }
  if (payload.refresh && payload.session_id === current) {
    document.dispatchEvent(new CustomEvent("timeline:refresh"));
  }
});

document.addEventListener("follower:resync", () => {
  if (!held) scheduleRefresh();
  document.dispatchEvent(new CustomEvent("timeline:refresh"));
});

// The row the list shows for a session: its page, its title, whether it is still blank.
function rowOf(sessionId) {
  const link = document.querySelector(`#session-list .session-row[data-session-id="${sessionId}"]`);
  if (!link) return null;
  const title = link.querySelector(".row-title");
  return {
    url: link.getAttribute("href"),
    title: title ? title.textContent.trim() : "",
    blank: link.dataset.blank === "true",
  };
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
  // A chain's row holds its older hops (docs/design.md, Lineage): their rows shown elsewhere go away.
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
      if (!held) await refreshSessionList();
    } catch (error) {
      console.warn("follower:", error);
    }
    refreshTimer = null;
    if (refreshAgain) scheduleRefresh();
  }, follower.config.refreshDelay ?? 100);
}

// Fetch the session list fragment (the URL htmx uses) and swap it in; resolves once the
// new rows are in the page. A response overtaken by a later refresh is dropped; one that has
// not fully come within the follower's fetchTimeout ms rejects (the jump's retry tries again).
let listVersion = 0;
async function refreshSessionList() {
  const list = document.getElementById("session-list");
  const url = list && list.getAttribute("hx-get");
  if (!url) return;
  const version = ++listVersion;
  const response = await fetch(url, { signal: AbortSignal.timeout(follower.config.fetchTimeout) });
  if (!response.ok) throw new Error(`session list: HTTP ${response.status}`);
  // Signed out meanwhile: the answer is the sign-in page, not a session list.
  if (response.redirected) throw new Error("session list: signed out");
  const html = await response.text();
  if (version !== listVersion) return;
  list.innerHTML = html;
  if (window.htmx) window.htmx.process(list);
}
