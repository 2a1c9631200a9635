"""The handoff's pages in the host's chat UI: the conversation panel, ``/handoff`` in the
composer and the ``{% handoff_panel %}`` tag. The engine never imports this."""
