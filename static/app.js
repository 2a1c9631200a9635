// Page behaviours of the chat and the settings card (the follower lives in follower.js).

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
  badge.textContent = connected ? "status channel connected" : "status channel unavailable";
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

document.addEventListener("DOMContentLoaded", scrollToEnd);
document.addEventListener("htmx:beforeSwap", () => {
  const scroller = conversationScroller();
  readerAtEnd =
    !scroller || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < END_SLACK_PX;
});
document.addEventListener("htmx:afterSettle", () => {
  if (readerAtEnd) scrollToEnd();
});
