"""The plain host with integer keys: its migrations (``tests.plain_host.int_settings``)."""
