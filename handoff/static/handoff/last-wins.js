// The last user action wins (docs/design.md, Live settings, screens and languages), for the
// handoff's controls that save on change through htmx: the panel's switch and the settings
// card's fields. A control marked
// data-last-wins saves with hx-sync "queue last": when it was changed again while its save was
// in flight, the older answer is not swapped in (that would replace the control and drop the
// queued save); the queued save then sends the newer value and its answer is shown. A switch
// posts to the action for the state the user left it in (data-on-url / data-off-url).
// Loaded (a module: once per page) by the templates holding such controls.

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
