"""A status channel that goes down is logged once, with the layer's traceback, per change to
down; a layer that stays down, or one that works, logs nothing more (docs/spec.md,
Degradation)."""

from __future__ import annotations

import logging
from unittest import mock

import pytest

from follower import channel
from follower.channel import StatusChannel

UNREACHABLE = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
    }
}


def errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "follower.channel" and r.levelno >= logging.ERROR
    ]


def test_an_unreachable_layer_is_logged_once_with_its_traceback(settings, caplog):
    settings.CHANNEL_LAYERS = UNREACHABLE
    with mock.patch.object(channel, "ANSWER_KEPT", 0):
        answers = [StatusChannel().available() for _ in range(3)]
    assert answers == [False] * 3
    [logged] = errors(caplog)
    assert logged.exc_info is not None
    assert "status channel is down" in logged.getMessage()


def test_a_layer_that_comes_back_and_goes_down_again_is_logged_again(settings, caplog):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    outage = ConnectionError("layer gone")
    with (
        mock.patch.object(channel, "ANSWER_KEPT", 0),
        mock.patch.object(
            StatusChannel,
            "_round_trip",
            side_effect=[outage, outage, True, outage],
        ),
    ):
        answers = [StatusChannel().available() for _ in range(4)]
    assert answers == [False, False, True, False]
    logged = errors(caplog)
    assert len(logged) == 2
    assert all(r.exc_info and r.exc_info[1] is outage for r in logged)


def test_a_working_layer_and_no_layer_log_nothing(settings, caplog):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert StatusChannel().available() is True
    settings.CHANNEL_LAYERS = {}
    assert StatusChannel().available() is False
    assert errors(caplog) == []


def test_a_layer_that_cannot_be_built_is_logged_once(settings, caplog, monkeypatch):
    monkeypatch.setattr(channel._Unbuilt, "failing", False)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "no.such.Layer"}}
    assert [StatusChannel().available() for _ in range(2)] == [False, False]
    [logged] = errors(caplog)
    assert logged.exc_info is not None
