"""URL routes of the Conversation Collaboration card and the sessions' handoff panels."""

from __future__ import annotations

from django.urls import URLPattern, path

from handoff_settings import views

app_name = "handoff_settings"
urlpatterns: list[URLPattern] = [
    path("", views.card, name="card"),
    path("activity/", views.activity, name="activity"),
    path("field/<str:name>/", views.save_field, name="field"),
    path("sessions/<uuid:session_id>/panel/", views.panel, name="panel"),
    path("sessions/<uuid:session_id>/<str:action>/", views.session_action, name="session_action"),
]
