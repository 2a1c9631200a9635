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
