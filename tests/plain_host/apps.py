"""The plain host's app config (label ``plain_host``)."""

from django.apps import AppConfig


class PlainHostConfig(AppConfig):
    name = "tests.plain_host"
    label = "plain_host"
    default_auto_field = "django.db.models.BigAutoField"
