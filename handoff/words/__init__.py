"""The words people read of the handoff, in their language (the i18n catalog, ``locale/``): one
module per surface they show on.

- ``brief``: the brief's fields (the admin, the review form);
- ``record``: a record's phase, reason and runtimes (the admin, the panel, the lineage page);
- ``meter``: the context meter's sentence (the panel, the status report, the API, the command);
- ``review``: what a brief waiting for review asks of the user (the composer, the command);
- ``log``: the handoff's fixed words in the host's log (the notice, a brief card's headings),
  through the host's ``HOST_ENTRY_WORDS`` and ``HOST_PLUGIN_ENTRY_FILTERS``.

The engine keeps identifiers and the English the agent reads (``handoff.core``); these modules
give their words with ``gettext``.
"""
