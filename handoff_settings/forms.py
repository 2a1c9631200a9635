"""The Conversation Collaboration card's form: the global switch, four thresholds, token basis.

Ranges are those of docs/spec.md, Trigger (via ``handoff.core.trigger.RANGES``).
The card saves one field at a time, the moment it changes, so a form is usually
bound to a single field (``only=``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from handoff import services, tasks
from handoff.core.trigger import RANGES
from handoff.models import HandoffSettings
from handoff.settings_store import EDITABLE, SettingsValues, rendered_value


def _bounds(name: str) -> dict[str, Any]:
    """The field's range (docs/spec.md, Trigger) and the card's own sentence for a value outside it,
    instead of Django's stock "Ensure this value is greater than or equal to …"."""
    low, high = RANGES[name]
    outside = format_lazy(_("Out of range: enter a value from {range}."), range=_range_text(name))
    return {
        "min_value": low,
        "max_value": high,
        "error_messages": {"min_value": outside, "max_value": outside},
    }


def _range_text(name: str) -> str:
    """The range as people write it: "0.2–0.95", "8,000–1,000,000"."""
    return "–".join(f"{int(v):,}" if float(v).is_integer() else f"{v:g}" for v in RANGES[name])


_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
DECIMAL_COMMA = "decimal_comma"
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+$")


def parse_number(text: str) -> float:
    """Return the number typed in ``text`` ("0.5", "120,000", "1e5"), thousands separators
    (``,`` or ``_``) allowed. Raises ``ValidationError`` saying what is wrong ("“abc” is not a
    number.") for anything else, infinities and NaN included. A decimal comma ("0,6") is told
    that a comma only groups thousands, so "120,000" and "0,6" follow one rule."""
    if _DECIMAL_COMMA.match(text) and not _THOUSANDS.search(text):
        raise ValidationError(
            _(
                "“%(text)s”: a comma only groups thousands (120,000); write decimals with a "
                "point: %(number)s."
            ),
            code=DECIMAL_COMMA,
            params={"text": text, "number": text.replace(",", ".")},
        )
    try:
        number = float(_THOUSANDS.sub("", text))
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise ValidationError(
            _("“%(text)s” is not a number."), code="invalid", params={"text": text}
        )
    return number


class NumberField(forms.FloatField):
    """A number typed as text; what is wrong with a refused one is said."""

    default_error_messages = {"required": _("Enter a number: the field is empty.")}
    widget = forms.TextInput(attrs={"inputmode": "decimal"})

    def to_python(self, value: Any) -> float | None:  # type: ignore[override]
        text = str(value if value is not None else "").strip()
        return parse_number(text) if text else None


class WholeNumberField(forms.IntegerField):
    """A whole number typed as digits ("120000" or "120,000")."""

    default_error_messages = {"required": _("Enter a whole number: the field is empty.")}
    widget = forms.TextInput(attrs={"inputmode": "numeric"})

    def to_python(self, value: Any) -> int | None:
        text = str(value if value is not None else "").strip()
        if not text:
            return None
        try:
            number = parse_number(text)
        except ValidationError as exc:
            if exc.code == DECIMAL_COMMA:
                raise
            number = math.nan
        if not number.is_integer():
            raise ValidationError(
                _("“%(text)s” is not a whole number."), code="invalid", params={"text": text}
            )
        if not re.fullmatch(r"[+-]?[\d,_]+", text):
            raise ValidationError(
                _("“%(text)s” is not written in digits: enter %(number)s."),
                code="invalid",
                params={"text": text, "number": int(number)},
            )
        return int(number)


class SwitchInput(forms.CheckboxInput):
    """A checkbox that hands its field what was sent (``CheckboxInput`` reads any text as on).

    An unchecked box sends nothing, which is off.
    """

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        return data.get(name, False)


class SwitchField(forms.BooleanField):
    """An on/off setting that accepts only a boolean choice.

    ``on``, ``true`` and ``1`` are on; ``off``, ``false``, ``0`` and nothing sent are off;
    anything else (``maybe``) is refused, so the card answers 422 and saves nothing.
    """

    widget = SwitchInput
    ON = frozenset({"on", "true", "1"})
    OFF = frozenset({"off", "false", "0"})

    def to_python(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in self.ON or text in self.OFF:
            return text in self.ON
        raise forms.ValidationError(
            _("%(label)s is a switch: send on or off, not %(value)r."),
            code="invalid",
            params={"label": self.label, "value": value},
        )


class StaleSetting(Exception):
    """The field's stored value changed since the card rendered it; nothing was saved.

    ``values`` are the settings as stored now.
    """

    def __init__(self, name: str, values: SettingsValues) -> None:
        self.name = name
        self.values = values
        super().__init__(f"{name} changed since it was shown")


class HandoffSettingsForm(forms.Form):
    """The card's fields; ``only`` binds the form to that one field (the others are dropped)."""

    auto_handoff = SwitchField(
        label=_("Automatic handoff"),
        required=False,
        help_text=_("Global switch. A conversation also needs its own switch on."),
    )
    review_handoffs = SwitchField(
        label=_("Review before the successor starts"),
        required=False,
        help_text=_(
            "A handoff stops with its brief and successor ready and waits for you to edit, "
            "commit or discard it. A conversation may choose otherwise in its panel."
        ),
    )
    handoff_ratio = NumberField(
        label=_("Window ratio"),
        **_bounds("handoff_ratio"),
        help_text=format_lazy(
            _("Fraction of the model's context window ({range})."),
            range=_range_text("handoff_ratio"),
        ),
    )
    handoff_tokens = WholeNumberField(
        label=_("Token ceiling"),
        **_bounds("handoff_tokens"),
        help_text=format_lazy(
            _("Absolute ceiling in tokens ({range})."), range=_range_text("handoff_tokens")
        ),
    )
    handoff_min_turns = WholeNumberField(
        label=_("Minimum turns"),
        **_bounds("handoff_min_turns"),
        help_text=format_lazy(
            _("Stops successor chains ({range})."), range=_range_text("handoff_min_turns")
        ),
    )
    handoff_compactions = WholeNumberField(
        label=_("Compactions"),
        **_bounds("handoff_compactions"),
        help_text=format_lazy(
            _("Hand off after this many compactions; 0 turns it off ({range})."),
            range=_range_text("handoff_compactions"),
        ),
    )
    token_basis = forms.ChoiceField(
        label=_("Token basis"),
        choices=[("context", _("Current context")), ("cumulative", _("Cumulative usage"))],
        help_text=_(
            "Current context: the prompt of the latest model call. "
            "Cumulative: the four usage buckets summed over the whole conversation."
        ),
    )

    def __init__(self, *args: Any, only: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if only is not None:
            if only not in self.fields:
                raise KeyError(f"unknown setting {only!r}")
            self.fields = {only: self.fields[only]}

    def save(self, rendered: dict[str, str] | None = None) -> tuple[SettingsValues, bool]:
        """Store the bound fields; return (the settings as stored now, whether anything changed).

        ``rendered`` maps a field to its value as the card showed it (``rendered_value``); when
        that field's stored value is another one now (changed in another tab, by someone else),
        ``StaleSetting`` is raised and nothing is saved. Fields not in it are not checked, so
        saves of different fields from two tabs both land.

        Idempotent: values equal to the stored ones are not written again, so a double submit
        makes one change (one ``version`` bump). The comparison and the write happen in one
        transaction holding the settings row's lock; a crash half-way leaves the previous
        settings. After a change every enabled main is evaluated in the background at once
        (the switch and thresholds are read live, docs/spec.md, Switches;
        ``handoff.tasks.evaluation_task``), so an idle conversation does not wait for its next turn
        and the request does not wait on every main; a crash between the two leaves the change saved
        and the mains evaluated at their next idle. Raises
        ``django.core.exceptions.ValidationError`` when the store refuses.
        """
        store = services.settings_store()
        with transaction.atomic():
            HandoffSettings.objects.select_for_update().get_or_create(pk=1)
            current = store.load()
            for name, shown in (rendered or {}).items():
                if rendered_value(getattr(current, name)) != shown:
                    raise StaleSetting(name, current)
            changes = {
                name: value
                for name, value in self.cleaned_data.items()
                if name in EDITABLE and getattr(current, name) != value
            }
            if not changes:
                return current, False
            values = store.save(**changes)
        tasks.enqueue_evaluation()
        return values, True
