// The settings card's page behaviour (docs/design.md, Live settings, screens and languages),
// loaded (a module: once per page) by the card's template (handoff_settings/card.html), with the handoff's
// handoff/last-wins.js for its fields. Over the follower (follower/static/follower/follower.js:
// window.follower) when the page has one; strings through Django's JavaScript catalog (gettext).
//
// - the status channel badge (#status-channel) follows the follower's socket ("follower:status"
//   {state: "connected" | "unavailable"}); with no status channel service it stays
//   "unavailable" (data-service="missing");
// - fields save on change through htmx; Enter in a field must not also submit the form natively
//   (that post carries no CSRF token and would leave the card): Enter commits the value (the
//   browser fires "change", which saves it in place) and nothing else happens;
// - live settings: a "settings.changed" follower event carries the stored values; every field
//   shows its new value, and the value it sends back with a save ("rendered") becomes the new
//   one. A field being edited (focused) is left alone: its save then carries the old value and
//   is refused (409) with the current one shown, instead of overwriting it silently. So is a
//   field whose save is in flight: its answer shows what was stored.

const CONTROLS = "input:not([type=hidden]), select";

// The socket's state when this module runs (it may have connected already), then each change.
function showStatus(state) {
  const badge = document.getElementById("status-channel");
  if (!badge || badge.dataset.service === "missing" || state === "connecting") return;
  const connected = state === "connected";
  badge.dataset.state = connected ? "connected" : "unavailable";
  badge.textContent = connected ? gettext("status channel connected") : gettext("status channel unavailable");
}

if (window.follower) showStatus(window.follower.state().connection);
document.addEventListener("follower:status", (event) => showStatus(event.detail?.state));

document.addEventListener("submit", (event) => {
  if (event.target instanceof HTMLFormElement && event.target.matches("form.setting")) {
    event.preventDefault();
  }
});

window.follower?.on("settings.changed", ({ payload }) => {
  for (const [name, value] of Object.entries(payload.settings)) {
    const form = document.getElementById(`setting-${name}`);
    const control = form && form.querySelector(CONTROLS);
    if (!control || control === document.activeElement) continue;
    if (form.classList.contains(window.htmx.config.requestClass)) continue;
    if (control.type === "checkbox") control.checked = value === true;
    else control.value = String(value);
    form.querySelector("input[name=rendered]").value = String(value);
  }
});
