"""The plain host with integer keys: ``tests.plain_host.settings``, but ``Conversation``'s
primary key is an integer (``PLAIN_HOST_INTEGER_KEYS``) and its migrations are those of that
model (``tests.plain_host.int_keys.migrations``). ``make test`` runs the plain host's tests under
both: ``pytest tests/plain_host --ds=tests.plain_host.int_settings``.
"""

from tests.plain_host.settings import *  # noqa: F403 - the plain host, one setting changed

PLAIN_HOST_INTEGER_KEYS = True
MIGRATION_MODULES = {"plain_host": "tests.plain_host.int_keys.migrations"}
