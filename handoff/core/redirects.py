"""The redirect map (docs/spec.md, Forwarding and cycles): no self-redirect, no cycle, flat.

After each change every entry points at its final destination, so ``destination()`` is one
look-up for a map built here; a map loaded from storage may still hold a cycle, which
``destination()`` detects and reports instead of looping.
"""

from __future__ import annotations

from collections.abc import Mapping


class RedirectError(ValueError):
    """A redirect that must not exist (self-redirect or one that would close a cycle)."""


class RedirectCycleError(RedirectError):
    """The map holds a cycle (possible only when loaded from storage)."""


class RedirectGraph:
    """``source -> destination`` ids, kept free of cycles and flattened."""

    def __init__(self, mapping: Mapping[str, str] | None = None) -> None:
        self._map: dict[str, str] = dict(mapping or {})

    def destination(self, source: str) -> str:
        """Follow the map from ``source`` to its end; return ``source`` itself when unmapped.

        Raises ``RedirectCycleError`` naming the cycle when the walk revisits a session.
        """
        path = [source]
        visited = {source}
        current = source
        while current in self._map:
            current = self._map[current]
            if current in visited:
                cycle = " -> ".join([*path[path.index(current) :], current])
                raise RedirectCycleError(f"redirect cycle: {cycle}")
            path.append(current)
            visited.add(current)
        return current

    def add(self, source: str, destination: str) -> dict[str, str]:
        """Install ``source -> destination`` and re-flatten; return the entries that changed.

        Raises ``RedirectError`` for a self-redirect, for a source that already redirects, or
        when ``destination`` leads back to ``source``; the map is unchanged then.
        """
        if source == destination:
            raise RedirectError(f"a session cannot redirect to itself ({source})")
        if source in self._map:
            raise RedirectError(f"{source} already redirects to {self._map[source]}")
        final = self.destination(destination)
        if final == source:
            raise RedirectError(f"redirecting {source} to {destination} would close a cycle")
        self._map[source] = final
        return {source: final, **self._flatten()}

    def remove(self, source: str) -> None:
        """Remove the entry for ``source`` (forwarding from it stops); unknown is a no-op."""
        self._map.pop(source, None)

    def _flatten(self) -> dict[str, str]:
        changed: dict[str, str] = {}
        for src, dst in list(self._map.items()):
            final = self.destination(dst)
            if final != dst:
                self._map[src] = final
                changed[src] = final
        return changed

    def as_dict(self) -> dict[str, str]:
        """Return a copy of the map."""
        return dict(self._map)
