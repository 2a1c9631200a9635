"""Simplified Chinese formats (``formats``)."""
