"""Unit tests for mcpfusion.errors: the exception tree and its stable codes."""

from __future__ import annotations

from mcpfusion import DefinitionError, FusionError, PresenterError, SerializationError, ToolError


def test_codes_and_bases() -> None:
    """Each error class has its stable code; DefinitionError is also a ValueError."""
    assert FusionError.code == "FUSION_ERROR"
    assert issubclass(DefinitionError, ValueError)
    assert DefinitionError.code == "DEFINITION_ERROR"
    assert SerializationError.code == "INTERNAL_ERROR"
    assert PresenterError.code == "PRESENTER_ERROR"
    for cls in (DefinitionError, SerializationError, PresenterError, ToolError):
        assert issubclass(cls, FusionError)


def test_presenter_error_message_names_presenter_item_and_field() -> None:
    """PresenterError says which Presenter, which item and which field failed."""
    err = PresenterError("Invoice", 3, "lines.0.qty", "Input should be a valid integer")
    assert str(err) == (
        "Presenter 'Invoice' rejected item 3, field 'lines.0.qty': Input should be a valid integer"
    )
    assert (err.presenter, err.index, err.path) == ("Invoice", 3, "lines.0.qty")


def test_presenter_error_for_a_single_object_without_path() -> None:
    """A single-object failure with no field path says 'the object'."""
    assert str(PresenterError("Invoice", None, "", "bad")) == (
        "Presenter 'Invoice' rejected the object: bad"
    )


def test_tool_error_carries_its_envelope_parts() -> None:
    """ToolError keeps a per-instance code and copies its optional parts."""
    details = {"id": "INV-9"}
    err = ToolError(
        "NOT_FOUND",
        "No such invoice.",
        recovery="List invoices.",
        available_actions=["billing.list"],
        details=details,
        retry_after=5,
        severity="warning",
    )
    assert (err.code, err.message, str(err)) == (
        "NOT_FOUND",
        "No such invoice.",
        "No such invoice.",
    )
    assert err.available_actions == ("billing.list",)
    assert err.details == details
    assert err.details is not details
    assert (err.recovery, err.retry_after, err.severity) == ("List invoices.", 5, "warning")
    assert ToolError.code == "TOOL_ERROR"


def test_tool_error_defaults() -> None:
    """A bare ToolError has severity error and no optional parts."""
    err = ToolError("X", "m")
    assert (err.recovery, err.available_actions, err.details, err.retry_after) == (
        None,
        (),
        None,
        None,
    )
    assert err.severity == "error"
