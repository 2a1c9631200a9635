"""What every route of the JSON API shares: its error answers and its paging.

Every error the API gives is ``{"detail": "<clear message>"}`` (a 422 adds ``errors``, pydantic's
list). ``config.api`` produces them; the routers of the host and the handoff app name, per route,
which of them it can give with ``answers(...)``, so the OpenAPI schema documents each one and
schemathesis can hold the API to it (bad input gets a clear error and changes nothing):

- 400 a body that is not JSON;
- 401 no bearer token and no signed-in browser session;
- 403 a browser session's unsafe request without its CSRF token;
- 404 a session or record that is missing or another user's (the same answer);
- 409 the handoff refused the action on that session, or the session is finished and takes no
  more input;
- 413 a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes;
- 422 a bad value, naming the field (``usage.output: ...``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination

# Ids and offsets are 64-bit in the database: a larger number is a 422, not a 500.
BIGINT_MAX = 2**63 - 1
PAGE_SIZE = 100
PAGE_MAX = 500

# What a route whose URL names a session or record can answer besides its own errors.
READ_ONE = (401, 404, 422)
# What a route that takes a JSON body for a session can answer besides its own errors.
WRITE_ONE = (400, 401, 403, 404, 413, 422)


def body_too_big(limit: int) -> str:
    """The 413 answer's ``detail`` for a body over ``limit`` bytes."""
    return f"The request body is larger than {limit} bytes; send less at a time."


class ErrorOut(Schema):
    """An error: ``detail`` says what was wrong and how to fix it."""

    detail: str


class ValidationErrorOut(ErrorOut):
    """A 422: ``detail`` names each bad field (``field: message; ...``); ``errors`` lists them."""

    errors: list[dict[str, Any]] = []


def answers(*codes: int) -> dict[int, type[ErrorOut]]:
    """Return the ``response=`` entries documenting ``codes`` (e.g. ``answers(401, 422)``)."""
    return {code: ValidationErrorOut if code == 422 else ErrorOut for code in codes}


class LimitOffsetPaging(LimitOffsetPagination):
    """ninja's ``limit``/``offset`` paging (``{"items", "count"}``), offsets bounded to 64 bits.

    ``limit`` is 1–500 (default 100); ``count`` is how many rows match over all pages.
    ``shape`` (optional) turns each row of the page into what the route answers, e.g. the
    handoff app's ``record_dict``; only the page's rows are read and shaped.
    """

    class Input(Schema):
        limit: int = Field(PAGE_SIZE, ge=1, le=PAGE_MAX, description="Rows per page.")
        offset: int = Field(0, ge=0, le=BIGINT_MAX, description="Rows to skip.")

    def __init__(self, shape: Callable[[Any], Any] | None = None, **kwargs: Any) -> None:
        super().__init__(max_limit=PAGE_MAX, **kwargs)
        self.shape = shape

    def paginate_queryset(
        self, queryset: QuerySet[Any], pagination: Any, request: HttpRequest, **params: Any
    ) -> dict[str, Any]:
        page: dict[str, Any] = super().paginate_queryset(queryset, pagination, request, **params)
        if self.shape is not None:
            page["items"] = [self.shape(row) for row in page["items"]]
        return page
