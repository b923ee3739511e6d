"""Unit tests of _adopt: another framework's tool function, presented."""

from __future__ import annotations

import inspect
import logging
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcpfusion import DefinitionError, ToolError, ToolResponse, response, success, tool_error
from mcpfusion._present.presenter import Presenter
from mcpfusion.integrations._adopt import adopt
from mcpfusion.testing import CallResult


class Row(BaseModel):
    """What may be sent."""

    id: int


class HostContext:
    """Stands for a host framework's context class."""


class Sent:
    """Stands for a host's result type."""


view = Presenter("Row", Row, rules=["Ids are stable."])


def hosted(fn: Any, presenter: Presenter | None = view) -> Any:
    """``fn`` adopted with the stand-ins, sending the response itself."""
    return adopt(fn, presenter, result_type=Sent, send=lambda r: r, context_type=HostContext)


def test_a_sync_function_stays_sync_and_presents_its_value() -> None:
    """A sync tool is still sync (the host runs it in a thread) and masks its value."""

    def get(row_id: int) -> dict[str, Any]:
        return {"id": row_id, "secret": "x"}

    presented = hosted(get)
    assert not inspect.iscoroutinefunction(presented)
    sent = presented(row_id=1)
    assert sent.blocks == ('{\n  "id": 1\n}', "<domain_rules>\n- Ids are stable.\n</domain_rules>")


def test_an_async_function_stays_async() -> None:
    """An async tool is still a coroutine function, presented the same way."""

    async def get(row_id: int) -> dict[str, Any]:
        return {"id": row_id}

    presented = hosted(get)
    assert inspect.iscoroutinefunction(presented)
    assert anyio.run(presented, 2).blocks[0] == '{\n  "id": 2\n}'


def test_the_host_sees_the_parameters_and_the_result_type_only() -> None:
    """Signature, hints, name and docstring are the original's, except the return type."""

    def get(row_id: int, ctx: HostContext, *, verbose: bool = False) -> Row:
        """Reads a row."""
        return Row(id=row_id)

    presented = hosted(get)
    signature = inspect.signature(presented)
    assert list(signature.parameters) == ["row_id", "ctx", "verbose"]
    assert signature.return_annotation is Sent
    assert presented.__annotations__ == {
        "row_id": int,
        "ctx": HostContext,
        "verbose": bool,
        "return": Sent,
    }
    assert (presented.__name__, presented.__doc__) == ("get", "Reads a row.")
    assert not hasattr(presented, "__wrapped__")


@pytest.mark.parametrize(
    ("value", "first"),
    [
        (None, "OK"),
        (success("built"), "built"),
        (response({"id": 5}).rule("Own rule."), '{\n  "id": 5\n}'),
        (tool_error("GONE", "Gone."), '<tool_error code="GONE" severity="error">'),
    ],
)
def test_the_wrapping_rule_is_the_apps(value: Any, first: str) -> None:
    """None is OK, a response passes, a builder is built: SPEC §13, as in an app."""
    sent = hosted(_returning(value))()
    assert isinstance(sent, ToolResponse)
    assert sent.blocks[0].startswith(first)


def _returning(value: Any) -> Any:
    def tool() -> Any:
        return value

    return tool


def test_without_a_presenter_a_value_is_sent_with_success() -> None:
    """No Presenter: the value is the data block, unmasked."""
    sent = hosted(_returning({"id": 1, "note": "kept"}), None)()
    assert sent.blocks == ('{\n  "id": 1,\n  "note": "kept"\n}',)


def test_a_tool_error_is_its_envelope_and_logged_quietly(caplog: pytest.LogCaptureFixture) -> None:
    """``ToolError`` is the envelope an app sends; an expected failure logs nothing above debug."""

    def get() -> None:
        raise ToolError("NOT_FOUND", "No row.", recovery="List rows.")

    caplog.set_level(logging.INFO, logger="mcpfusion")
    result = CallResult(hosted(get)())
    assert (result.is_error, result.error_code) == (True, "NOT_FOUND")
    assert caplog.records == []


def test_a_presenter_failure_names_the_tool() -> None:
    """Data that does not fit is ``PRESENTER_ERROR``, naming the function as the tool."""
    result = CallResult(hosted(_returning({"id": "x"}))())
    assert result.error_code == "PRESENTER_ERROR"
    assert result.error is not None
    assert result.error.message.startswith("Tool 'tool' could not present its data.")


def test_other_exceptions_are_the_hosts() -> None:
    """An exception mcpfusion does not own propagates to the host framework."""

    def get() -> None:
        raise KeyError("host's to handle")

    with pytest.raises(KeyError, match="host's to handle"):
        hosted(get)()


def test_callbacks_receive_the_host_context_by_keyword_or_position() -> None:
    """The argument of the parameter annotated with the host's context reaches callbacks."""
    seen: list[Any] = []
    probe = Presenter("Probe", Row)

    @probe.rules
    def _record(row: Any, ctx: Any) -> None:
        seen.append(ctx)

    def get(ctx: HostContext | None, row_id: int = 1) -> dict[str, int]:
        return {"id": row_id}

    context = HostContext()
    presented = adopt(get, probe, result_type=Sent, send=lambda r: r, context_type=HostContext)
    presented(ctx=context)
    presented(context, 2)
    untyped = adopt(get, probe, result_type=Sent, send=lambda r: r, context_type=None)
    untyped(context)
    assert seen == [context, context, None]


def test_the_result_goes_through_send() -> None:
    """What the function returns is ``send(response)``, the host's result value."""
    sent = adopt(
        _returning(None), None, result_type=Sent, send=lambda r: ("sent", r.text), context_type=None
    )()
    assert sent == ("sent", "OK")


def test_definition_mistakes_fail_when_decorating() -> None:
    """Not a Presenter, not a function, or unresolvable hints: a definition error at once."""
    with pytest.raises(DefinitionError, match="takes a Presenter or None"):
        adopt(_returning(1), "view", result_type=Sent, send=lambda r: r, context_type=None)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="decorates a function"):
        hosted(view)

    def broken(row: Unknown) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(DefinitionError, match="cannot resolve the type hints of 'broken'"):
        hosted(broken)


def test_a_large_async_presentation_runs_off_the_loop() -> None:
    """From the off-loop threshold an async tool's rows are presented in a worker thread."""
    rows = [{"id": index} for index in range(2_000)]
    threads: list[bool] = []
    probe = Presenter("Big", Row)

    @probe.collection_rules
    def _where(data: Any) -> None:
        try:
            anyio.get_current_task()
        except RuntimeError:
            threads.append(True)
        else:
            threads.append(False)

    async def many() -> list[dict[str, int]]:
        return rows

    anyio.run(adopt(many, probe, result_type=Sent, send=lambda r: r, context_type=None))
    assert threads == [True]
