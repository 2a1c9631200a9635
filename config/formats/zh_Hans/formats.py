"""Simplified Chinese number formats over Django's ``zh_Hans`` (the rest stays Django's).

Django's groups by four digits with no separator, so a grouped figure (``floatformat:"0g"``,
``number_format(force_grouping=True)``: token counts on the meter, the status report, the
lineage page and the admin) read "12345". The pages group by three with a comma, "12,345", as
the English pages do and as the settings card reads a typed figure back
(``handoff_settings.forms``).
"""

THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
