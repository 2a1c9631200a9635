"""URL routes of the handoff_settings app."""

from django.urls import URLPattern

app_name = "handoff_settings"
urlpatterns: list[URLPattern] = []
