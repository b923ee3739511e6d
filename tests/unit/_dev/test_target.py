"""``run_command``: the one exit-status rule of ``mcpfusion`` and ``mcpfusion dev``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mcpfusion._dev.command import main_dev
from mcpfusion._dev.target import USAGE_ERROR, UsageError, run_command
from mcpfusion._errors import DefinitionError


def _args(outcome: int | BaseException) -> argparse.Namespace:
    """Parsed arguments whose handler returns ``outcome`` or raises it."""

    def handler(_: argparse.Namespace) -> int:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return argparse.Namespace(handler=handler)


def test_the_handlers_status_is_the_commands() -> None:
    """A handler's own exit status is what the command returns."""
    assert run_command(_args(3)) == 3


@pytest.mark.parametrize(
    "mistake", [UsageError("no such file: app.py"), DefinitionError("no such file: app.py")]
)
def test_a_usage_or_definition_mistake_is_one_line_and_status_2(
    mistake: Exception, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``UsageError`` or ``DefinitionError`` is one ``mcpfusion:`` line on stderr, status 2."""
    assert run_command(_args(mistake)) == USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.err == "mcpfusion: no such file: app.py\n" and captured.out == ""


def test_ctrl_c_exits_with_130() -> None:
    """An interrupt ends the command with the shell's status for SIGINT."""
    assert run_command(_args(KeyboardInterrupt())) == 130


def test_the_dev_command_on_its_own_reports_a_bad_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m mcpfusion._dev`` goes through the same rule: a missing file is status 2."""
    assert main_dev([f"{tmp_path}/missing.py:app", "--port", "0"]) == USAGE_ERROR
    assert "mcpfusion: " in capsys.readouterr().err
