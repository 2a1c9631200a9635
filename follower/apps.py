from django.apps import AppConfig


class FollowerConfig(AppConfig):
    name = "follower"
    verbose_name = "Follower"
