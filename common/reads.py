"""Reads done once per page request: a page of the host filled by the handoff asks several
times for the same rows (the session, its redirect, main state, lineage and usage), once per
part of the page that shows them; within one ``GET`` they are read once and shared.

``once`` marks a read (a function of hashable arguments that only reads); ``ReadsOnceMiddleware``
makes every marked read run at most once per arguments while a ``GET`` or ``HEAD`` request is
answered, and ``reads_once`` does the same for any block. Outside both a marked read runs every
time it is called, so writes (other methods, tasks, the handoff's transactions) always read
what is stored now. A memo lives in a ``ContextVar``: each request (thread or task) has its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

from django.http import HttpRequest, HttpResponseBase

P = ParamSpec("P")
T = TypeVar("T")

_memo: ContextVar[dict[tuple[Any, ...], Any] | None] = ContextVar("reads_once", default=None)

READING = ("GET", "HEAD")
"""The request methods whose reads ``ReadsOnceMiddleware`` shares."""


@contextmanager
def reads_once() -> Iterator[None]:
    """Within the block, each ``once`` read runs at most once per arguments (nested blocks
    share the outer block's reads)."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def once(read: Callable[P, T]) -> Callable[P, T]:
    """Mark ``read`` (its arguments hashable; it reads and writes nothing a caller would read
    back within the same block) as shared inside ``reads_once``."""

    @functools.wraps(read)
    def shared(*args: P.args, **kwargs: P.kwargs) -> T:
        memo = _memo.get()
        if memo is None:
            return read(*args, **kwargs)
        key = (read, args, tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = read(*args, **kwargs)
        result: T = memo[key]
        return result

    return shared


class ReadsOnceMiddleware:
    """Answer ``GET`` and ``HEAD`` requests inside ``reads_once`` (sync views)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method not in READING:
            return self.get_response(request)
        with reads_once():
            return self.get_response(request)
