"""SQL the ORM does not say: ``UPDATE … RETURNING`` for counters, and retrying a transaction
the database killed.

``QuerySet.update`` returns only a row count (ticket #32406): a counter bumped with ``F() + 1``
and then read back costs two statements; numbering log entries does this on every write, so it
is one statement here. PostgreSQL and SQLite
(3.35 and later) both support ``RETURNING``.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.db import OperationalError, connections, router, transaction
from django.db.models import Field, Model

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


def increment(
    model: type[Model], key_field: str, key: Any, counter: str, *also: str, by: int = 1
) -> tuple[Any, ...] | None:
    """Add ``by`` (1 unless given) to ``counter`` of the row whose ``key_field`` is ``key``;
    return the stored values.

    One statement, which locks the row until the transaction ends (call it inside
    ``transaction.atomic()`` to keep the lock). Returns ``(counter, *also)`` as the database has
    them after the update (plain column values: ids come back as the database stores them), or
    None when no row matched.
    """
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    key_model_field = _concrete(model, key_field)
    column = quote(_column(model, counter))
    returned = ", ".join(quote(_column(model, name)) for name in (counter, *also))
    sql = (
        f"UPDATE {quote(model._meta.db_table)} SET {column} = {column} + %s "
        f"WHERE {quote(_column(model, key_field))} = %s RETURNING {returned}"
    )
    value = key_model_field.get_db_prep_value(key, connection)
    with connection.cursor() as cursor:
        cursor.execute(sql, [by, value])
        row = cursor.fetchone()
    return tuple(row) if row is not None else None


def _concrete(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or field.column is None:
        raise ValueError(f"{model.__name__}.{name} is not a column")
    return field


def _column(model: type[Model], name: str) -> str:
    column = _concrete(model, name).column
    assert column is not None
    return column


RETRIED_SQLSTATES = frozenset({"40001", "40P01"})
"""PostgreSQL's serialization failure and deadlock detected: the database rolled the
transaction back and says that running it again may succeed."""

RETRY_ATTEMPTS = 5
"""Runs of a retried transaction at most (the first and four retries)."""

RETRY_PAUSE = 0.05
"""Seconds before the first retry; each later one waits twice as long, with jitter."""


def retried_transaction(work: Callable[P, T]) -> Callable[P, T]:
    """Run ``work`` in ``transaction.atomic()``; run it again when the database killed it.

    When ``work`` opens the outermost transaction and PostgreSQL aborts it with a serialization
    failure or a detected deadlock (``RETRIED_SQLSTATES``), everything it wrote was rolled back,
    so the whole call runs again, up to ``RETRY_ATTEMPTS`` runs, after a short jittered pause
    (``RETRY_PAUSE`` seconds, doubling); the last failure is raised as it came
    (``django.db.OperationalError``). Inside an outer transaction it runs once: only the
    outermost transaction can be retried, by whoever opened it. Apply it only where running
    the whole call twice is safe: its effects outside the database wait for the commit
    (``transaction.on_commit``) and its input is idempotent (a ``client_id``, a relay id)
    (docs/design.md, "Lock order").
    """

    @functools.wraps(work)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        connection = transaction.get_connection()
        for attempt in range(1, RETRY_ATTEMPTS + 1):
            outermost = not connection.in_atomic_block
            try:
                with transaction.atomic():
                    return work(*args, **kwargs)
            except OperationalError as exc:
                sqlstate = getattr(exc.__cause__, "sqlstate", None)
                if not outermost or sqlstate not in RETRIED_SQLSTATES or attempt == RETRY_ATTEMPTS:
                    raise
                pause = RETRY_PAUSE * 2 ** (attempt - 1) * (0.5 + random.random())
                logger.info("%s: %s (run %d); running it again", work.__qualname__, exc, attempt)
                time.sleep(pause)
        raise AssertionError("unreachable: the last run returns or raises")

    return run
