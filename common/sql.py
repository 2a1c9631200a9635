"""``UPDATE … RETURNING`` for counters, which Django's ORM cannot say (``QuerySet.update``
returns only a row count, ticket #32406).

A counter bumped with ``F() + 1`` and then read back costs two statements; numbering log entries
and follower events does this on every write, so it is one statement here. PostgreSQL and SQLite
(3.35 and later) both support ``RETURNING``.
"""

from __future__ import annotations

from typing import Any

from django.db import connections, router
from django.db.models import Field, Model


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
