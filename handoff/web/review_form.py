"""The brief as an editable form (docs/spec.md, Review): "A handoff is ready for review".

``BriefReview`` is the goal (a ``Form``) and one Django formset per list field of the
brief schema (docs/spec.md, Brief), each item a text with Django's own ``ORDER`` (reorder) and
``DELETE`` (remove) fields; ``add`` binds one more, empty item to a list. ``brief()`` returns the
edited brief; the brief's rules (schema, 40 000 characters) are checked by the commit itself
(``handoff.review.commit``), so the form and every other surface refuse the same briefs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from handoff.core.brief import LIST_FIELDS
from handoff.words.brief import HEADINGS, HELP


class GoalForm(forms.Form):
    """The brief's ``goal``: a non-empty text."""

    goal = forms.CharField(
        label=_("Goal"),
        help_text=HELP["goal"],
        widget=forms.Textarea(attrs={"rows": 2, "translate": "no"}),
    )


class ItemForm(forms.Form):
    """One item of a list field; left empty, it is dropped."""

    text = forms.CharField(
        label=_("Item"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 1, "translate": "no"}),  # the brief is user content
    )


ItemFormSet = forms.formset_factory(ItemForm, extra=0, can_order=True, can_delete=True)


class BriefReview:
    """The goal form and one ``ItemFormSet`` per list field (prefix: the field's name).

    Unbound from ``brief`` (the record's), bound from ``data`` (a POST); ``add`` names a list
    that gets one more, empty item.
    """

    def __init__(
        self, brief: dict[str, Any], data: QueryDict | None = None, *, add: str = ""
    ) -> None:
        if data is not None and add in LIST_FIELDS:
            data = data.copy()
            total = f"{add}-TOTAL_FORMS"
            data[total] = str(int(data.get(total) or 0) + 1)
        self.goal = GoalForm(data, initial={"goal": brief.get("goal", "")})
        self.lists = [
            (
                name,
                HEADINGS[name],
                HELP[name],
                ItemFormSet(
                    data, prefix=name, initial=[{"text": item} for item in brief.get(name, [])]
                ),
            )
            for name in LIST_FIELDS
        ]

    def is_valid(self) -> bool:
        """Return whether the goal and every list are valid (all are checked)."""
        results = [self.goal.is_valid(), *(items.is_valid() for *_labels, items in self.lists)]
        return all(results)

    def brief(self) -> dict[str, Any]:
        """Return the edited brief: the goal and each list in its ``ORDER``, removed and empty
        items left out. Call after ``is_valid()``."""
        edited: dict[str, Any] = {"goal": self.goal.cleaned_data["goal"]}
        for name, *_labels, items in self.lists:
            texts = (form.cleaned_data.get("text", "") for form in items.ordered_forms)
            edited[name] = [text for text in texts if text]
        return edited
