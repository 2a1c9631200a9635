"""Settings → Conversation Collaboration: the card (and admin page) editing the handoff's
global settings, which live in the engine (``handoff.settings_store``)."""
