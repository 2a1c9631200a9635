"""The global handoff settings (one row) and the Settings → Conversation Collaboration card."""
