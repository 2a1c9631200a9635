"""``UPDATE … RETURNING`` for counters, which Django's ORM cannot say (``QuerySet.update``
returns only a row count, ticket #32406).

A counter bumped with ``F() + 1`` and then read back costs two statements; numbering log entries
and follower events does this on every write, so it is one statement here. PostgreSQL and SQLite
(3.35 and later) both support ``RETURNING``.
"""

from __future__ import annotations

from typing import Any

from django.db import connections, router
from django.db.models import Model


def increment(
    model: type[Model], key_field: str, key: Any, counter: str, *also: str
) -> tuple[Any, ...] | None:
    """Add 1 to ``counter`` of the row whose ``key_field`` is ``key``; return the stored values.

    One statement, which locks the row until the transaction ends (call it inside
    ``transaction.atomic()`` to keep the lock). Returns ``(counter, *also)`` as the database has
    them after the update (plain column values: ids come back as the database stores them), or
    None when no row matched.
    """
    alias = router.db_for_write(model)
    connection = connections[alias]
    quote = connection.ops.quote_name
    meta = model._meta
    key_model_field = meta.get_field(key_field)
    column = quote(meta.get_field(counter).column)
    returned = ", ".join(quote(meta.get_field(name).column) for name in (counter, *also))
    sql = (
        f"UPDATE {quote(meta.db_table)} SET {column} = {column} + 1 "
        f"WHERE {quote(key_model_field.column)} = %s RETURNING {returned}"
    )
    value = key_model_field.get_db_prep_value(key, connection)
    with connection.cursor() as cursor:
        cursor.execute(sql, [value])
        row = cursor.fetchone()
    return tuple(row) if row is not None else None
