from django.apps import AppConfig


class HostConfig(AppConfig):
    name = "host"
    verbose_name = "Conversation host"
