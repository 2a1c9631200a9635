"""The plain host with the engine and its pages but without the settings card: the plain host's
settings (``tests.plain_host.settings``) less ``handoff_settings``. Its test database is migrated
without the card's migrations (the engine's own create the settings row's table). ``make test``
runs ``tests/plain_host/test_engine_alone.py`` under it.
"""

from tests.plain_host.settings import *  # noqa: F403 - the plain host, the card left out
from tests.plain_host.settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "handoff_settings"]
