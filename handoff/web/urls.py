"""URL routes of a conversation's handoff panel (its switch and "Hand off now") and lineage page.

A session id is matched by the converter of the session model's primary key (``uuid``, ``int``,
else ``str``: ``handoff.session_model.session_path_converter``), so a malformed id is a 404 and
the views get the key as the model reads it.
"""

from __future__ import annotations

from django.urls import URLPattern, path

from handoff.session_model import session_path_converter
from handoff.web import views

SESSION = f"sessions/<{session_path_converter()}:session_id>"

app_name = "handoff_web"
urlpatterns: list[URLPattern] = [
    path(f"{SESSION}/panel/", views.panel, name="panel"),
    path(f"{SESSION}/review/", views.review_brief, name="review"),
    path(f"{SESSION}/lineage/", views.lineage_page, name="lineage"),
    path(f"{SESSION}/<str:action>/", views.session_action, name="session_action"),
]
