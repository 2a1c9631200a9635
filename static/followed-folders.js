// The followed folders' switches in Settings (host.follow.SessionSource.scripts): a
// "folder.switched" follower event carries a folder's path and whether the user follows it now;
// its switch shows that on every open tab. A switch being changed here (its save in flight) is
// left alone: its answer shows what was stored.
window.follower.on("folder.switched", ({ payload }) => {
  const { path, on } = payload;
  for (const form of document.querySelectorAll("form[data-folder]")) {
    if (form.dataset.folder !== path) continue;
    if (window.htmx && form.classList.contains(window.htmx.config.requestClass)) continue;
    form.querySelector("input[name=on]").checked = on === true;
  }
});
