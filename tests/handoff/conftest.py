"""Fixtures of the handoff app's tests: fault injection at the attempt's points and a recording
LLM service (helpers that are plain functions live in ``handoff_support``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from handoff_support import RecordingLLM

from handoff import services
from handoff.attempt import Attempt, fault_hook


@pytest.fixture
def at_point() -> Iterator[Callable[[str, Callable[[Attempt], object]], None]]:
    """Return ``inject(point, action)``: run ``action(attempt)`` when the transaction reaches
    ``point`` (an exception it raises is that point failing). Disconnected at teardown."""
    connected: list[Callable[..., None]] = []

    def inject(wanted: str, action: Callable[[Attempt], object]) -> None:
        def receiver(sender: Any, point: str, attempt: Attempt, **kwargs: Any) -> None:
            if point == wanted:
                action(attempt)

        fault_hook.connect(receiver, weak=False)
        connected.append(receiver)

    yield inject
    for receiver in connected:
        fault_hook.disconnect(receiver)


@pytest.fixture
def recording_llm() -> Iterator[type[RecordingLLM]]:
    """Register ``RecordingLLM`` as the llm service at run time (unregistered at teardown)."""
    RecordingLLM.calls = []
    RecordingLLM.answer = RecordingLLM.DEFAULT_ANSWER
    services.register(services.LLM, RecordingLLM)
    yield RecordingLLM
    services.unregister(services.LLM)
    RecordingLLM.answer = RecordingLLM.DEFAULT_ANSWER
