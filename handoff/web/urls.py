"""URL routes of a conversation's handoff panel (its switch and "Hand off now") and lineage page."""

from __future__ import annotations

from django.urls import URLPattern, path

from handoff.web import views

app_name = "handoff_web"
urlpatterns: list[URLPattern] = [
    path("sessions/<uuid:session_id>/panel/", views.panel, name="panel"),
    path("sessions/<uuid:session_id>/review/", views.review_brief, name="review"),
    path("sessions/<uuid:session_id>/lineage/", views.lineage_page, name="lineage"),
    path("sessions/<uuid:session_id>/<str:action>/", views.session_action, name="session_action"),
]
