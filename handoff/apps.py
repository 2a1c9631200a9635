from django.apps import AppConfig


class HandoffConfig(AppConfig):
    name = "handoff"
    verbose_name = "Session handoff"
