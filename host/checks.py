"""System checks of the host's settings (``manage.py check``, run before every command)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register

from host.conf import host_settings
from host.templatetags.chat_hooks import PAGE_SLOTS


@register()
def llm_endpoint_names_a_model(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """An OpenAI-compatible endpoint needs a model (``HOST_LLM_MODEL``, from the environment's
    ``HANDOFF_LLM_MODEL``, which the message names): there is nothing to call otherwise."""
    if settings.HOST_LLM_BASE_URL and not settings.HOST_LLM_MODEL:
        return [
            Error(
                "HANDOFF_LLM_BASE_URL is set but HANDOFF_LLM_MODEL is empty.",
                hint="Set HANDOFF_LLM_MODEL to the endpoint's model name, or unset "
                "HANDOFF_LLM_BASE_URL to use the offline summarizer and agent.",
                id="host.E001",
            )
        ]
    return []


@register()
def page_panels_name_known_slots(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``HOST_PAGE_PANELS`` names only the slots the pages offer (``chat_hooks.PAGE_SLOTS``)."""
    unknown = sorted(set(host_settings().page_panels) - set(PAGE_SLOTS))
    if unknown:
        return [
            Error(
                f"HOST_PAGE_PANELS names slots no page offers: {', '.join(unknown)}.",
                hint=f"The conversation page's slots are {', '.join(PAGE_SLOTS)}.",
                id="host.E003",
            )
        ]
    return []


@register(Tags.security, deploy=True)
def secret_key_is_set(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``check --deploy``: a deployment sets ``DJANGO_SECRET_KEY``.

    Without it the key is the one this checkout generated for itself (``config.secret_key``),
    which other processes and hosts of the deployment do not share (docs/operations.md,
    Production settings).
    """
    if host_settings().secret_key_generated:
        return [
            Error(
                "DJANGO_SECRET_KEY is not set: the secret key was generated into a file of "
                "this checkout.",
                hint="Set DJANGO_SECRET_KEY to one random value (50+ characters) shared by "
                "every process of the deployment.",
                id="host.E002",
            )
        ]
    return []
