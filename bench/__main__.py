"""Run the benchmarks: ``python -m bench [follower|handoff|briefs]`` (a throwaway SQLite
database unless DATABASE_URL; the channel layer of REDIS_URL, else in-memory).

Without an argument every benchmark runs; ``follower`` runs only the follower's (a few
minutes at most: simulated tabs and sockets on loopback against one Daphne worker), ``pages``
only its page mode (``bench/follower_pages.py``), ``handoff``
only what one handoff costs (``bench/handoff_cost.py``, about ten seconds), ``briefs`` only the
brief evaluation (``bench/briefs.py``: each log's brief against its probes, under a minute),
``soak`` the outage soak (``bench/soak.py``: private PostgreSQL and Redis cut under load).
"""

from __future__ import annotations

import os
import sys
import tempfile


def main() -> None:
    """Set Django up on a scratch database, migrate it, then run the benchmarks asked for.

    ``soak`` (``bench/soak.py``, about two and a half minutes) sets Django up on its own
    private PostgreSQL and Redis instead, and runs only when asked for.
    """
    if sys.argv[1:] == ["soak"]:
        from bench import soak

        soak.main()
        return
    scratch = tempfile.mkdtemp(prefix="handoff-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{scratch}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)

    from bench import (
        briefs,
        follower_fanout,
        follower_pages,
        follower_tabs,
        handoff_cost,
        import_memory,
        redirect_lookup,
        token_read,
    )

    groups = {
        "follower": (follower_tabs, follower_pages, follower_fanout),
        "pages": (follower_pages,),
        "handoff": (handoff_cost,),
        "briefs": (briefs,),
    }
    everything = (
        token_read, redirect_lookup, import_memory, handoff_cost, briefs, *groups["follower"]
    )  # fmt: skip
    chosen = sys.argv[1:]
    if len(chosen) > 1 or (chosen and chosen[0] not in groups):
        raise SystemExit(f"usage: python -m bench [{'|'.join([*groups, 'soak'])}]")
    modules = groups[chosen[0]] if chosen else everything
    for module in modules:
        module.run()


if __name__ == "__main__":
    main()
