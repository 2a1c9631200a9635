"""URL routes of the Conversation Collaboration card."""

from __future__ import annotations

from django.urls import URLPattern, path

from handoff_settings import views

app_name = "handoff_settings"
urlpatterns: list[URLPattern] = [
    path("", views.card, name="card"),
    path("activity/", views.activity, name="activity"),
    path("field/<str:name>/", views.save_field, name="field"),
]
