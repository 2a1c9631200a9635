"""URL routes of the host app."""

from django.urls import URLPattern

app_name = "chat"
urlpatterns: list[URLPattern] = []
