"""Run every benchmark: ``python -m bench`` (a throwaway SQLite database unless DATABASE_URL)."""

from __future__ import annotations

import os
import tempfile


def main() -> None:
    """Set Django up on a scratch database, migrate it, then run each benchmark in turn."""
    scratch = tempfile.mkdtemp(prefix="handoff-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{scratch}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)

    from bench import handoff_cost, import_memory, redirect_lookup, token_read

    for module in (token_read, redirect_lookup, import_memory, handoff_cost):
        module.run()


if __name__ == "__main__":
    main()
