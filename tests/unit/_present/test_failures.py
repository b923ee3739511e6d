"""Unit tests of mcpfusion._present.failures: exceptions turned into results, and what is logged."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpfusion import Fusion, OutputMismatchError, PresenterError, SerializationError, ToolError
from mcpfusion._present.failures import from_exception, unknown_action


def test_tool_error_inside_a_task_group_is_unwrapped() -> None:
    """A ToolError raised in a task group still becomes its own envelope."""
    group = ExceptionGroup("tasks", [ExceptionGroup("inner", [ToolError("BUSY", "Busy.")])])
    assert from_exception(group, "t", "a").blocks[0].startswith('<tool_error code="BUSY"')


def test_group_of_several_is_internal(caplog: pytest.LogCaptureFixture) -> None:
    """A group of several failures is one INTERNAL_ERROR."""
    group = ExceptionGroup("tasks", [ValueError("x"), ToolError("BUSY", "Busy.")])
    with caplog.at_level(logging.ERROR, logger="mcpfusion"):
        result = from_exception(group, "t", "a")
    assert 'code="INTERNAL_ERROR"' in result.blocks[0]


def test_warning_tool_error_is_not_an_error() -> None:
    """A ToolError with severity warning has isError false (SPEC §9)."""
    result = from_exception(
        ToolError("STALE", "Data is an hour old.", severity="warning"), "t", "a"
    )
    assert result.is_error is False
    assert 'severity="warning"' in result.blocks[0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: ToolError("X", "m", severity="fatal"),  # type: ignore[arg-type]
    ],
    ids=["bad severity"],
)
@pytest.mark.anyio
async def test_a_tool_error_that_cannot_be_made_is_internal(
    make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A malformed ToolError fails inside the handler: the call is INTERNAL_ERROR, logged."""
    app = Fusion("app")

    @app.tool("t").action("a")
    def fails() -> None:
        raise make()

    with caplog.at_level(logging.ERROR, logger="mcpfusion"):
        result = await app.call_tool("t", {"action": "a"})
    assert 'code="INTERNAL_ERROR"' in result.blocks[0]
    assert caplog.records[-1].exc_info is not None


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (PresenterError("P", 0, "x", "bad"), "PRESENTER_ERROR"),
        (SerializationError("nope"), "INTERNAL_ERROR"),
        (OutputMismatchError("nope"), "INTERNAL_ERROR"),
        (KeyError("k"), "INTERNAL_ERROR"),
    ],
)
def test_defects_are_logged_with_tracebacks(
    exc: Exception, code: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every defect is logged on `mcpfusion` at ERROR with its exception attached."""
    with caplog.at_level(logging.DEBUG, logger="mcpfusion"):
        result = from_exception(exc, "t", "a")
    assert f'code="{code}"' in result.blocks[0]
    [record] = caplog.records
    assert (record.name, record.levelno) == ("mcpfusion", logging.ERROR)
    assert record.exc_info is not None and record.exc_info[1] is exc


def test_expected_failures_log_quietly(caplog: pytest.LogCaptureFixture) -> None:
    """A ToolError is expected: it is logged at DEBUG, without a traceback."""
    with caplog.at_level(logging.DEBUG, logger="mcpfusion"):
        from_exception(ToolError("NOT_FOUND", "Gone."), "t", "a")
    [record] = caplog.records
    assert record.levelno == logging.DEBUG and record.exc_info is None


def test_unknown_action_echo_is_cut() -> None:
    """A huge action name is echoed cut to 50 characters."""
    text = unknown_action("t", "x" * 10_000, ["a"]).blocks[0]
    assert '"' + "x" * 48 + "…" in text and len(text) < 400
