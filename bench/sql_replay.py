"""The same SQL without the ORM: record the statements an action sends, replay them bare.

``record(action)`` runs ``action`` once and keeps every statement it sent through Django's
cursor (SQL, parameters, and which outermost transaction it ran in; ``BEGIN``, ``COMMIT`` and
savepoints are left to the replay's own ``atomic`` blocks). ``Recording.replay(ids)`` returns a
callable that sends those statements again, with the same parameters, through
``connection.cursor()``, grouped in as many transactions: no query building, no model
instances, no Python of the action's own. What it costs is what the database and the driver
cost for the action's SQL; the action's time minus it is the ORM's and the action's Python.

A replay must write new rows, so every id in the parameters (a ``UUID``, its 32-digit hex or
its dashed form inside a string or a JSON value) is replaced by a fresh one, except those
``ids`` maps to a given one (the benchmark's prepared source). Ids that are integers (an
autoincrement key) are sent as recorded: a statement on such a row then touches no row, at
the same cost.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.transaction import Atomic

_CONTROL = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")
_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])"
)


@dataclass(frozen=True)
class Statement:
    """One recorded statement: its outermost transaction's number (``None``: autocommitted),
    SQL, parameters (a sequence of parameter rows when ``many``: ``executemany``)."""

    transaction: int | None
    sql: str
    params: tuple[Any, ...]
    many: bool = False


def _text(param: Any) -> str:
    """The text a parameter's ids can be found in (a JSON adapter's value dumped)."""
    if isinstance(param, uuid.UUID):
        return param.hex
    if hasattr(param, "obj"):  # psycopg's Json/Jsonb adapters
        return json.dumps(param.obj)
    return str(param)


def _swapped(param: Any, ids: Mapping[uuid.UUID, uuid.UUID]) -> Any:
    """``param`` with every id of ``ids`` replaced (UUIDs, strings, JSON adapters)."""
    if isinstance(param, uuid.UUID):
        return ids.get(param, param)
    if isinstance(param, str):
        return _UUID.sub(lambda m: _swap_text(m.group(0), ids), param)
    if hasattr(param, "obj"):
        return type(param)(json.loads(_swapped(json.dumps(param.obj), ids)))
    return param


def _swap_text(found: str, ids: Mapping[uuid.UUID, uuid.UUID]) -> str:
    new = ids.get(uuid.UUID(found))
    if new is None:
        return found
    return str(new) if "-" in found else new.hex


@dataclass(frozen=True)
class Recording:
    """The statements one run of an action sent, in order."""

    statements: tuple[Statement, ...]

    def ids(self) -> set[uuid.UUID]:
        """Every UUID found in the recorded parameters."""
        return {
            uuid.UUID(found)
            for statement in self.statements
            for param in _flat(statement)
            for found in _UUID.findall(_text(param))
        }

    def replay(self, given: Mapping[uuid.UUID, uuid.UUID]) -> Callable[[], None]:
        """Return a callable that sends the statements again, ids swapped (``given``, else a
        fresh ``uuid4`` each), each recorded transaction in one ``atomic`` block. The swapping
        happens here, before the callable is timed."""
        ids = {found: given.get(found) or uuid.uuid4() for found in self.ids()}
        swapped = [
            Statement(s.transaction, s.sql, _swapped_params(s, ids), s.many)
            for s in self.statements
        ]
        return lambda: _send(swapped)


def _flat(statement: Statement) -> Iterator[Any]:
    """Every parameter of ``statement`` (of each row when ``many``)."""
    rows = statement.params if statement.many else (statement.params,)
    for row in rows:
        yield from row


def _swapped_params(statement: Statement, ids: Mapping[uuid.UUID, uuid.UUID]) -> tuple[Any, ...]:
    if statement.many:
        return tuple(tuple(_swapped(p, ids) for p in row) for row in statement.params)
    return tuple(_swapped(p, ids) for p in statement.params)


def _execute(cursor: Any, statement: Statement) -> None:
    if statement.many:
        cursor.executemany(statement.sql, statement.params)
    else:
        cursor.execute(statement.sql, statement.params)


def _groups(statements: list[Statement]) -> Iterator[list[Statement]]:
    """The statements in runs of one transaction (an autocommitted statement alone)."""
    run: list[Statement] = []
    for statement in statements:
        if run and (statement.transaction is None or statement.transaction != run[0].transaction):
            yield run
            run = []
        run.append(statement)
    if run:
        yield run


def _send(statements: list[Statement]) -> None:
    for run in _groups(statements):
        if run[0].transaction is None:
            with connection.cursor() as cursor:
                _execute(cursor, run[0])
            continue
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in run:
                _execute(cursor, statement)


def record(
    action: Callable[[], object], leave_out: Callable[[], bool] = lambda: False
) -> Recording:
    """Run ``action`` and return the statements it sent (transaction control left out, and
    those sent while ``leave_out()`` is true)."""
    sent: list[Statement] = []
    with TransactionCounter() as opened:

        def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            if not sql.lstrip().upper().startswith(_CONTROL) and not leave_out():
                number = opened.blocks if connection.in_atomic_block else None
                rows = tuple(tuple(row) for row in params) if many else tuple(params or ())
                sent.append(Statement(number, sql, rows, many))
            return execute(sql, params, many, context)

        with connection.execute_wrapper(keep):
            action()
    return Recording(tuple(sent))


# Statements that write nothing themselves (reads and transaction control).
NOT_WRITES = ("SELECT", *_CONTROL)


class TransactionCounter:
    """Counts the transactions run inside it: outermost ``atomic`` blocks (``blocks``), plus
    each write statement autocommitted outside one (``count``: both)."""

    def __init__(self) -> None:
        self.count = 0
        self.blocks = 0
        self._enter = Atomic.__enter__

    def __enter__(self) -> TransactionCounter:
        enter, counter = self._enter, self

        def counting_enter(atomic: Atomic) -> None:
            if not connection.in_atomic_block:
                counter.count += 1
                counter.blocks += 1
            enter(atomic)

        Atomic.__enter__ = counting_enter  # type: ignore[method-assign]
        self._wrapper = connection.execute_wrapper(self._autocommitted)
        self._wrapper.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._wrapper.__exit__(None, None, None)
        Atomic.__enter__ = self._enter  # type: ignore[method-assign]

    def _autocommitted(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if not connection.in_atomic_block and not sql.lstrip().upper().startswith(NOT_WRITES):
            self.count += 1
        return execute(sql, params, many, context)
