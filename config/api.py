"""The django-ninja API under ``/api/`` (OpenAPI docs at ``/api/docs``)."""

from ninja import NinjaAPI

api = NinjaAPI(title="Session Handoff API", version="1")
