"""The site's number and date formats per language (``FORMAT_MODULE_PATH``), over Django's."""
