// The handoff panel and its review form on a conversation's page (docs/spec.md, Switches;
// Review), loaded (a module: once per page) by the panel's slot (handoff/slots/panel.html).
// Over the follower (follower/static/follower/follower.js: window.follower) when the page has
// one; strings through Django's JavaScript catalog (gettext) when the page loads it.
//
// - the review notice (handoff/slots/review_notice.html, by the host's composer) shows while a
//   review form is on the page; its link brings the form into view and focuses its first field;
// - a "settings.changed" follower event reloads the panel ("handoff:refresh"): it says whether
//   the global switch holds the conversation back;
// - a refresh asked for while the panel's own request is in flight is not lost (below);
// - a late answer does not put one conversation's panel on another's page (below).

// What a page sets up runs when it loads and when the follower brings another page in place.
function onPage(setup) {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
  document.addEventListener("follower:page", setup);
}

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

// A panel sent out of band belongs to its conversation: an answer that comes after the follower
// brought another conversation's page in place (a review committed, the tab moved to the
// successor) does not put the source's panel on the successor's page.
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const { target, fragment } = event.detail;
  if (target.id !== "handoff-panel") return;
  const incoming = fragment.querySelector("#handoff-panel");
  if (incoming && incoming.dataset.session !== target.dataset.session) event.detail.shouldSwap = false;
});

window.follower?.on("settings.changed", () => {
  if (window.htmx && document.getElementById("handoff-panel")) {
    window.htmx.trigger(document.body, "handoff:refresh");
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
