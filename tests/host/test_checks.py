"""System checks and safe defaults: host.checks, config.settings, config.secret_key (issue 9)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from shared_files import ROOT

from config.secret_key import load_or_create
from host.checks import llm_endpoint_names_a_model, secret_key_is_set

# The environment of an install with nothing configured: no DJANGO_*, no services.
UNCONFIGURED = {
    name: value
    for name, value in os.environ.items()
    if not name.startswith("DJANGO_") and name not in {"DATABASE_URL", "REDIS_URL"}
}
# The production variables docs/operations.md documents.
PRODUCTION = {
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "handoff.example.org",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://handoff.example.org",
    "DJANGO_HTTPS": "1",
}


def run_django(code: str, **env: str) -> dict[str, object]:
    """Run ``code`` in a fresh process with Django set up from ``env``; return its JSON print."""
    prelude = (
        "import json, django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; "
        "django.setup()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=ROOT,
        env={**UNCONFIGURED, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**UNCONFIGURED, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_offline_default_passes(settings):
    settings.HOST_LLM_BASE_URL = ""
    settings.HOST_LLM_MODEL = ""
    assert llm_endpoint_names_a_model() == []


def test_endpoint_without_a_model_is_an_error(settings):
    settings.HOST_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.HOST_LLM_MODEL = ""
    [error] = llm_endpoint_names_a_model()
    assert error.id == "host.E001"
    assert "HANDOFF_LLM_MODEL" in error.msg


def test_endpoint_with_a_model_passes(settings):
    settings.HOST_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.HOST_LLM_MODEL = "gpt-4o"
    assert llm_endpoint_names_a_model() == []


# --- safe defaults (issue 9) -------------------------------------------------------------------


def test_settings_default_to_production_safe_values():
    seen = run_django(
        "from django.conf import settings\n"
        "print(json.dumps({'debug': settings.DEBUG, 'hosts': settings.ALLOWED_HOSTS, "
        "'key': settings.SECRET_KEY, 'generated': settings.SECRET_KEY_GENERATED}))"
    )

    assert seen["debug"] is False
    assert "*" not in str(seen["hosts"])
    assert seen["generated"] is True
    assert seen["key"] == (ROOT / ".secret_key").read_text().strip()


def test_settings_take_the_deployments_secret_key():
    seen = run_django(
        "from django.conf import settings\n"
        "print(json.dumps({'key': settings.SECRET_KEY, "
        "'generated': settings.SECRET_KEY_GENERATED}))",
        **PRODUCTION,
    )

    assert seen == {"key": PRODUCTION["DJANGO_SECRET_KEY"], "generated": False}


def test_an_anonymous_404_lists_no_url_patterns():
    seen = run_django(
        "from django.test import Client\n"
        "r = Client().get('/no-such-page/', HTTP_HOST='localhost')\n"
        "print(json.dumps({'status': r.status_code, 'body': r.content.decode()}))"
    )

    assert seen["status"] == 404
    assert "api/" not in str(seen["body"]) and "URLconf" not in str(seen["body"])


def test_a_database_outage_shows_no_traceback():
    seen = run_django(
        "from django.test import Client\n"
        "c = Client(raise_request_exception=False, HTTP_AUTHORIZATION='Bearer x')\n"
        "r = c.get('/api/sessions', HTTP_HOST='localhost')\n"
        "print(json.dumps({'status': r.status_code, 'body': r.content.decode()}))",
        DATABASE_URL="postgres://handoff@127.0.0.1:9/handoff",
    )

    assert seen["status"] == 500
    for leak in ("Traceback", "127.0.0.1", "OperationalError", "handoff@"):
        assert leak not in str(seen["body"])


def test_check_deploy_passes_with_the_documented_production_variables():
    done = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)

    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout


def test_check_deploy_asks_for_a_secret_key_when_none_is_set():
    without_key = {k: v for k, v in PRODUCTION.items() if k != "DJANGO_SECRET_KEY"}
    done = manage("check", "--deploy", **without_key)

    assert done.returncode != 0
    assert "host.E002" in done.stderr


def test_secret_key_check_default(settings):
    settings.SECRET_KEY_GENERATED = False
    assert secret_key_is_set() == []


def test_secret_key_check_set(settings):
    settings.SECRET_KEY_GENERATED = True
    [error] = secret_key_is_set()
    assert error.id == "host.E002"


def test_a_generated_key_is_random_kept_and_private(tmp_path: Path):
    first = load_or_create(tmp_path / "key")
    again = load_or_create(tmp_path / "key")
    other = load_or_create(tmp_path / "other")

    assert first == again != other
    assert len(first) >= 50
    assert (tmp_path / "key").stat().st_mode & 0o077 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key", "other"]


def test_a_key_file_that_appears_meanwhile_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "key"
    real_link = os.link

    def racing_link(source: str, target: Path) -> None:
        path.write_text("written by another process")
        real_link(source, target)

    monkeypatch.setattr(os, "link", racing_link)

    assert load_or_create(path) == "written by another process"
    assert [p.name for p in tmp_path.iterdir()] == ["key"]


def test_a_key_that_cannot_be_kept_asks_for_djangos_setting(tmp_path: Path):
    with pytest.raises(ImproperlyConfigured, match="Set DJANGO_SECRET_KEY"):
        load_or_create(tmp_path / "missing-folder" / "key")
