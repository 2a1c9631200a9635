"""The plain host's URLs."""

from django.urls import path

from tests.plain_host import views

urlpatterns = [path("c/<uuid:pk>/", views.conversation, name="conversation")]
