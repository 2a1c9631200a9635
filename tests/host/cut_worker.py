"""``python tests/host/cut_worker.py TASK_WORKER_OPTIONS…``: ``manage.py task_worker`` on a
database the test can cut.

While the file named by the ``CUT_FILE`` environment variable exists, every query of this
process (each thread's connection) fails with the ``OperationalError`` a database that went away
raises; once the file is gone, queries run again. The failure is injected through Django's
``execute_wrapper`` hook, so it works on SQLite and PostgreSQL alike and cuts only this process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def cut(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
    """Fail the query while the cut file exists; run it otherwise."""
    from django.db import OperationalError

    if Path(os.environ["CUT_FILE"]).exists():
        raise OperationalError("server closed the connection unexpectedly (cut by the test)")
    return execute(sql, params, many, context)


def wrap(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: put ``cut`` in front of the new connection's queries."""
    if cut not in connection.execute_wrappers:
        connection.execute_wrappers.append(cut)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db.backends.signals import connection_created

    connection_created.connect(wrap)
    call_command("task_worker", *sys.argv[1:])


if __name__ == "__main__":
    main()
