"""What stops installed hooks from running, and whether the server answers them.

Built against Claude Code 2.1 and Codex CLI 0.145+ (the references named in
``agent_hooks.install``). Each check reads files only, and answers sentences for
``manage.py agent_hooks status``:

- Claude Code: ``disableAllHooks: true`` in the settings that decide it (managed settings, then
  the project's local, the project's shared, the user's), ``allowManagedHooksOnly`` in managed
  settings, and for the project scope the folder's trust dialog (interactive sessions hold
  every hook back until the folder is trusted; ``~/.claude.json``).
- Codex: ``[features] hooks = false`` (or the older ``codex_hooks``) in ``config.toml`` or the
  administrator's ``requirements.toml``; the trust step (Codex runs a hook from ``hooks.json``
  only once the user trusted its current definition in ``/hooks``, recorded as
  ``[hooks.state."<hooks.json>:<event>:<group>:<handler>"]`` in ``config.toml``); for the
  project scope the project's own trust; and the versions that need the feature flag or do not
  run hooks on Windows.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_hooks.install import (
    CLAUDE_MANAGED_SETTINGS,
    CODEX_REQUIREMENTS,
    Target,
    codex_home,
    home,
    is_ours,
    platform_key,
)

RESTART_NOTE = (
    "Sessions already running read their hooks when they started: restart them (or open a "
    "new one) to use the hooks installed now."
)


def read_json(path: Path) -> dict[str, Any]:
    """Return the JSON object in ``path``; ``{}`` when it is missing or unreadable."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def read_toml(path: Path) -> dict[str, Any]:
    """Return the TOML table in ``path``; ``{}`` when it is missing or unreadable."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def table(document: dict[str, Any], key: str) -> dict[str, Any]:
    """Return ``document[key]`` when it is a table (dict), else ``{}``."""
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def claude_settings_chain(target: Target, env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """Return Claude Code's settings files by precedence, highest first, as (name, path)."""
    chain = [("managed settings", CLAUDE_MANAGED_SETTINGS[platform_key()])]
    if target.project is not None:
        chain += [
            ("project local settings", target.project / ".claude" / "settings.local.json"),
            ("project settings", target.project / ".claude" / "settings.json"),
        ]
    base = env.get("CLAUDE_CONFIG_DIR")
    chain.append(
        ("user settings", (Path(base) if base else home(env) / ".claude") / "settings.json")
    )
    return chain


def claude_blockers(target: Target, env: Mapping[str, str]) -> list[str]:
    """Return why Claude Code would not run the product's hooks (empty: nothing found)."""
    found = []
    chain = claude_settings_chain(target, env)
    for name, path in chain:
        value = read_json(path).get("disableAllHooks")
        if isinstance(value, bool):
            if value:
                found.append(f"disableAllHooks is true in the {name} ({path}): no hook runs.")
            break
    managed_name, managed = chain[0]
    if read_json(managed).get("allowManagedHooksOnly") is True:
        found.append(
            f"allowManagedHooksOnly is true in the {managed_name} ({managed}): only the "
            "organisation's hooks run, not these."
        )
    if target.project is not None and not claude_folder_trusted(target.project, env):
        found.append(
            f"{target.project} is not marked trusted in Claude Code yet: an interactive "
            "session runs no hook there until its trust dialog is accepted."
        )
    return found


def claude_folder_trusted(folder: Path, env: Mapping[str, str]) -> bool:
    """Whether ``~/.claude.json`` records the trust dialog accepted for ``folder`` or a parent."""
    base = env.get("CLAUDE_CONFIG_DIR")
    state = read_json((Path(base) if base else home(env)) / ".claude.json")
    projects = state.get("projects")
    if not isinstance(projects, dict):
        return False
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        entry = projects.get(str(candidate))
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
    return False


def snake(event: str) -> str:
    """``PreCompact`` → ``pre_compact``: the event's name in Codex's trust keys."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def codex_trust_keys(document: dict[str, Any]) -> list[str]:
    """Return the ends (``<event>:<group>:<handler>``) of the ``hooks.state`` keys Codex gives
    the product's handlers in ``document``; the key starts with the hooks file's path."""
    keys = []
    hooks = document.get("hooks")
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if is_ours(handler):
                    keys.append(f"{snake(event)}:{g}:{h}")
    return keys


def codex_blockers(target: Target, env: Mapping[str, str], document: dict[str, Any]) -> list[str]:
    """Return why Codex would not run the product's hooks in ``document`` (the hooks file)."""
    found = []
    config_path = codex_home(env) / "config.toml"
    config = read_toml(config_path)
    features = table(config, "features")
    flag = features.get("hooks", features.get("codex_hooks"))
    if flag is False:
        found.append(f"[features] hooks = false in {config_path}: Codex runs no hook.")
    elif flag is None:
        found.append(
            "Codex versions from before hooks were on by default need "
            f"'[features] codex_hooks = true' in {config_path}; current ones need nothing."
        )
    requirements = CODEX_REQUIREMENTS.get(platform_key())
    required = table(read_toml(requirements), "features") if requirements else {}
    if required.get("hooks") is False:
        found.append(f"Your administrator turned hooks off ({requirements}).")
    found += codex_trust(target, config, document)
    if platform_key() == "win32":
        found.append("Codex versions that list hooks as experimental do not run them on Windows.")
    return found


def codex_trust(target: Target, config: dict[str, Any], document: dict[str, Any]) -> list[str]:
    """Return the trust steps still missing: the hooks' own review, and a project's trust.

    A hook counts as reviewed when ``hooks.state`` holds a ``trusted_hash`` under its key (the
    file named as given or canonicalised, as Codex does for an explicit ``CODEX_HOME``); Codex
    asks again when the hook's definition changed since, which this does not check.
    """
    state = table(table(config, "hooks"), "state")
    prefixes = {str(target.path), os.path.realpath(target.path)}

    def trusted(end: str) -> bool:
        entries = (state.get(f"{prefix}:{end}") for prefix in prefixes)
        return any(isinstance(entry, dict) and entry.get("trusted_hash") for entry in entries)

    missing = [end for end in codex_trust_keys(document) if not trusted(end)]
    found = []
    if missing:
        found.append(
            f"{len(missing)} hook(s) await the trust step: start Codex, open /hooks and trust "
            "them (needed once, and again after an install that changed them)."
        )
    if target.project is not None:
        entry = table(config, "projects").get(str(target.project.resolve()), {})
        if not (isinstance(entry, dict) and entry.get("trust_level") == "trusted"):
            found.append(
                f"Codex ignores {target.path} until the project {target.project} is trusted."
            )
    return found


def server_answer(server: str, token: str | None, timeout: float = 3.0) -> str:
    """Return a sentence on whether the server answers a cheap authenticated GET
    (``/api/sessions?limit=1``) with this token. Never raises, never names the token."""
    if token is None:
        return "No token file: run install to write one."
    request = urllib.request.Request(
        f"{server}/api/sessions?limit=1", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"The server at {server} does not answer ({reason}): hooks do nothing until it does."
    if status == 200:
        return f"The server at {server} answers and accepts the token."
    if status == 401:
        return f"The server at {server} answers but refuses the token: run install again."
    return f"The server at {server} answers HTTP {status}."
