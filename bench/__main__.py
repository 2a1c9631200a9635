"""Run the benchmarks: ``python -m bench [follower|handoff|briefs]`` (a throwaway SQLite
database unless DATABASE_URL; the channel layer of REDIS_URL, else in-memory).

Without an argument every benchmark runs; ``follower`` runs only the follower's (a few
minutes at most: simulated tabs and sockets on loopback against one Daphne worker), ``pages``
only its page mode (``bench/follower_pages.py``), ``handoff``
only what one handoff costs (``bench/handoff_cost.py``, about ten seconds), ``import`` only the
import rate beside a read-only parse (``bench/import_rate.py``, under a minute), ``briefs`` only the
brief evaluation (``bench/briefs.py``: each log's brief against its probes, under a minute),
``soak`` the outage soak (``bench/soak.py``: private PostgreSQL and Redis cut under load),
``fanout`` only its 1 000 sockets on one worker, the project's path beside the plain Channels
idiom (``bench/follower_fanout.py``), ``pieces`` the hub's private pieces (its read thread,
the pong's newest id, the probe and re-join after a Redis restart, the sender) each beside
Channels' idiom (``bench/hub_pieces.py``, a few minutes, a private Redis of its own for the
outage), ``chromium`` five real Chromium tabs on a long imported log (``bench/chromium_tabs.py``),
``follow`` following live logs (``bench/follow.py``: append → event, idle CPU, first scan),
``hooks`` the hook round trip (``bench/hooks.py``: the real hook command against the project's
server, beside a bare interpreter start; about a minute, not part of the full run).
``hook-stop`` a terminal session's ``Stop`` hook up to ``prepared`` (``bench/hook_stop.py``).

``briefs --markdown`` rewrites the generated part of ``docs/briefs.md`` (the count of logs
run, the table, each brief) instead of printing the table.

``--both`` after a benchmark's name (``python -m bench pages --both``) runs it twice, each in a
process of its own: on SQLite + the in-memory layer, then on PostgreSQL + Redis
(``BENCH_DATABASE_URL``, ``BENCH_REDIS_URL``; defaults in ``CONFIGURATIONS``), each table under
a line naming its configuration.

``--browsers many`` (``python -m bench pages --browsers many [--both]``) runs the page mode with
every tab in a browser of its own, ``--browsers shared`` (the default) with every tab in one
(``bench/follower_pages.py``, ``BROWSERS``); it is passed on as ``BENCH_PAGE_BROWSERS``.

``--concurrency 4,0`` (``python -m bench pages --concurrency 4,0 [--browsers many]``) runs each
row of the page mode on a Daphne process per value, one right after the other: at most 4 HTTP
requests at once, then no bound (``DJANGO_HTTP_CONCURRENCY``, ``config/concurrency.py``); it is
passed on as ``BENCH_PAGE_CONCURRENCY``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

GROUPS = {
    "follower": ("follower_tabs", "follower_pages", "chromium_tabs", "follower_fanout"),
    "pages": ("follower_pages",),
    "chromium": ("chromium_tabs",),
    "handoff": ("handoff_cost",),
    "briefs": ("briefs",),
    "import": ("import_rate",),
    "follow": ("follow",),
    "hooks": ("hooks",),
    "hook-stop": ("hook_stop",),
    "fanout": ("follower_fanout",),
    "pieces": ("hub_pieces",),
}
"""The benchmarks one name runs (modules of ``bench``, each with ``run()``), in order."""
EVERYTHING = (
    "token_read", "redirect_lookup", "import_memory", "import_rate", "handoff_cost", "briefs",
    *GROUPS["follower"],
)  # fmt: skip
"""What ``python -m bench`` without a name runs."""
CONFIGURATIONS = {
    "SQLite file + in-memory channel layer": {},
    "PostgreSQL + Redis": {
        "DATABASE_URL": ("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sh_bench"),
        "REDIS_URL": ("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7"),
    },
}
"""What ``--both`` runs on: per configuration, each setting's variable and default."""


BROWSERS = ("shared", "many")
"""The choices of ``--browsers`` (``bench.follower_pages.BROWSERS``)."""


def run_both(benchmark: str) -> None:
    """Run ``python -m bench <benchmark>`` once per configuration of ``CONFIGURATIONS``, one
    after the other in processes of their own, each under a line naming its configuration.

    Raises ``SystemExit`` naming the configurations whose run failed (after running both).
    """
    failed = []
    for name, settings in CONFIGURATIONS.items():
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env |= {
            key: os.environ.get(variable, default) for key, (variable, default) in settings.items()
        }
        shown = f" ({env['DATABASE_URL']}, {env['REDIS_URL']})" if settings else ""
        print(f"== {benchmark} on {name}{shown}", flush=True)
        command = [sys.executable, "-m", "bench", benchmark]
        if subprocess.run(command, env=env, cwd=Path(__file__).resolve().parents[1]).returncode:
            failed.append(name)
    if failed:
        raise SystemExit(f"python -m bench {benchmark} failed on: {', '.join(failed)}")


def create_database(connection: Any) -> bool:
    """Create the database ``connection`` (a Django ``DatabaseWrapper``) names when it does not
    exist yet, as Django's test runner creates its test database: through a connection to the
    server's maintenance database (``_nodb_cursor``). Returns whether it was created.

    SQLite creates its file on first use, so only PostgreSQL is looked at (``pg_database``).
    Raises the driver's ``OperationalError`` when the server cannot be reached.
    """
    if connection.vendor != "postgresql":
        return False
    name = connection.settings_dict["NAME"]
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is not None:
            return False
        cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
    return True


def arguments(argv: list[str]) -> argparse.Namespace:
    """Parse the command line (``benchmark``, ``both``, ``browsers``, ``concurrency``,
    ``markdown``); exit with the usage on a wrong one (``--both`` needs a benchmark other than
    ``soak``, ``--markdown`` goes with ``briefs``)."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("benchmark", nargs="?", choices=[*GROUPS, "soak"])
    parser.add_argument("--both", action="store_true", help="SQLite, then PostgreSQL + Redis")
    parser.add_argument("--browsers", choices=BROWSERS, help="the page mode's tabs' browsers")
    parser.add_argument(
        "--concurrency", help="the page mode's servers: DJANGO_HTTP_CONCURRENCY values, e.g. 4,0"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="with briefs: write docs/briefs.md's table"
    )
    args = parser.parse_args(argv)
    if args.both and args.benchmark in (None, "soak"):
        parser.error("--both needs one of: " + ", ".join(GROUPS))
    if args.markdown and args.benchmark != "briefs":
        parser.error("--markdown goes with briefs only")
    return args


def main() -> None:
    """Set Django up on a scratch database (created when DATABASE_URL names a PostgreSQL
    database that does not exist yet), migrate it, then run the benchmarks asked for.

    ``soak`` (``bench/soak.py``, about two and a half minutes) sets Django up on its own
    private PostgreSQL and Redis instead, and runs only when asked for.
    """
    args = arguments(sys.argv[1:])
    if args.browsers:
        os.environ["BENCH_PAGE_BROWSERS"] = args.browsers
    if args.concurrency:
        os.environ["BENCH_PAGE_CONCURRENCY"] = args.concurrency
    if args.benchmark == "soak":
        from bench import soak

        soak.main()
        return
    if args.both:
        run_both(args.benchmark)
        return
    scratch = tempfile.mkdtemp(prefix="handoff-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{scratch}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    if create_database(connection):
        print(f"(created the database {connection.settings_dict['NAME']})", flush=True)
    call_command("migrate", verbosity=0)
    if args.markdown:
        from bench import briefs

        briefs.write_markdown()
        return
    for name in GROUPS[args.benchmark] if args.benchmark else EVERYTHING:
        importlib.import_module(f"bench.{name}").run()


if __name__ == "__main__":
    main()
