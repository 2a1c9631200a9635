"""``python manage.py task_worker [db_worker's options] [--max-backoff S] [--running-timeout S]``.

django-tasks-db's ``db_worker`` run by ``host.worker.ResilientWorker``: it waits out database
outages with backoff instead of exiting, and marks the task rows of killed workers failed.
The Procfile's ``worker`` line runs it.
"""

from __future__ import annotations

import os
from argparse import ArgumentParser, ArgumentTypeError
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from host.worker import ResilientWorker, bound_idle_transactions

DEFAULT_MAX_BACKOFF = 30.0
# Longer than any task here runs: a summary call times out after 180 s, an agent turn sooner.
DEFAULT_RUNNING_TIMEOUT = 900.0


def positive_seconds(value: str) -> float:
    """Parse a number of seconds above zero (``argparse`` type)."""
    seconds = db_worker.valid_interval(value)
    if seconds <= 0:
        raise ArgumentTypeError("Must be greater than zero")
    return seconds


class Command(db_worker.Command):
    help = "Run the database task worker, kept running through database outages."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--max-backoff",
            type=positive_seconds,
            default=DEFAULT_MAX_BACKOFF,
            metavar="SECONDS",
            help="longest wait between tries while the database is unavailable "
            "(default: %(default)s)",
        )
        parser.add_argument(
            "--running-timeout",
            type=positive_seconds,
            default=DEFAULT_RUNNING_TIMEOUT,
            metavar="SECONDS",
            help="a task row running longer counts as lost with its worker and is marked "
            "failed (default: %(default)s)",
        )

        parser.add_argument(
            "--idle-transaction-timeout",
            type=positive_seconds,
            metavar="SECONDS",
            help="on PostgreSQL, the server ends a transaction of this process left idle longer "
            "(a stalled worker), freeing its locks; only for a worker in a process of its own "
            "(default: never)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Run a ``ResilientWorker`` with db_worker's options (its reload too)."""
        self.configure_logging(options["verbosity"])
        if options["idle_transaction_timeout"]:
            bound_idle_transactions(options["idle_transaction_timeout"])
        batch, reload = options["batch"], options["reload"] and not options["batch"]
        queue_names = options["queue_name"].split(",")
        excluded = options["exclude_queues"].split(",") if options["exclude_queues"] else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = ResilientWorker(
            max_backoff=options["max_backoff"],
            running_timeout=timedelta(seconds=options["running_timeout"]),
            queue_names=queue_names,
            interval=options["interval"],
            batch=batch,
            backend_name=options["backend_name"],
            startup_delay=options["startup_delay"],
            max_tasks=options["max_tasks"],
            worker_id=options["worker_id"],
            excluded_queue_names=excluded,
        )
        if not reload:
            worker.configure_signals()
            worker.run()
            return
        if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
            worker.configure_signals()  # only the child process, as db_worker does
        run_with_reloader(worker.run)
