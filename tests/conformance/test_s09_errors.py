"""SPEC §9: the error envelopes this layer builds (tool_error, error, required)."""

from __future__ import annotations

import pytest

from mcpfusion import error, required, tool_error
from mcpfusion._errors import Severity
from mcpfusion._wire.format import validation_error
from mcpfusion._wire.parse import parse
from tests.conformance.golden import assert_golden


def test_tool_error_with_every_optional_element() -> None:
    """SPEC §9: message, recovery, actions, details and retry_after appear in template order."""
    result = tool_error(
        "RATE_LIMITED",
        "Too many calls.",
        recovery="Wait, then call again.",
        available_actions=["billing.list", "billing.get"],
        details={"limit": 100, "window": "1 minute"},
        retry_after=30,
        severity="critical",
    )
    assert_golden("s09_tool_error_full.txt", result)
    assert result.is_error is True


def test_tool_error_minimal() -> None:
    """SPEC §9: optional elements are left out when not set."""
    assert tool_error("NOT_FOUND", "Invoice INV-9 does not exist.").blocks == (
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "<message>Invoice INV-9 does not exist.</message>\n"
        "</tool_error>",
    )


def test_optional_elements_keep_their_order() -> None:
    """SPEC §9: each subset of optional elements keeps the template order."""
    text = tool_error("C", "m", retry_after=5, details={"k": "v"}).blocks[0]
    assert text == (
        '<tool_error code="C" severity="error">\n<message>m</message>\n'
        '<details>\n  <detail key="k">v</detail>\n</details>\n'
        "<retry_after>5 seconds</retry_after>\n</tool_error>"
    )
    text = tool_error("C", "m", available_actions=["a"], recovery="r").blocks[0]
    assert text == (
        '<tool_error code="C" severity="error">\n<message>m</message>\n'
        "<recovery>r</recovery>\n"
        "<available_actions>\n  <action>a</action>\n</available_actions>\n</tool_error>"
    )


def test_retry_after_zero_is_kept() -> None:
    """SPEC §9: retry_after is set when it is 0, so it appears."""
    assert "<retry_after>0 seconds</retry_after>" in tool_error("C", "m", retry_after=0).blocks[0]


def test_escaping_golden() -> None:
    """SPEC §9: element text escapes & and <; attributes escape all five characters."""
    result = tool_error(
        "A&B\"<>'",
        "x < y & z > w \"q\" 'p'",
        recovery="<recovery>",
        available_actions=["a<b"],
        details={"k\"<>&'": "v & <v>"},
    )
    assert_golden("s09_tool_error_escaping.txt", result)


def test_warning_is_not_an_error() -> None:
    """SPEC §9: a warning has isError false and says severity="warning"."""
    result = tool_error("STALE", "Data may be stale.", severity="warning")
    assert result.is_error is False
    assert result.to_mcp()["isError"] is False
    assert result.blocks[0].startswith('<tool_error code="STALE" severity="warning">')


@pytest.mark.parametrize("severity", ["error", "critical"])
def test_error_and_critical_are_errors(severity: Severity) -> None:
    """SPEC §9: severities error and critical have isError true."""
    assert tool_error("C", "m", severity=severity).is_error is True


@pytest.mark.parametrize("severity", ["fatal", "ERROR", ""])
def test_unknown_severity_raises(severity: str) -> None:
    """SPEC §9: severity is one of warning, error, critical."""
    with pytest.raises(ValueError, match="severity"):
        tool_error("C", "m", severity=severity)  # type: ignore[arg-type]


def test_error_helper() -> None:
    """SPEC §9: error(message) is an error envelope with a default code; code= overrides it."""
    assert_golden("s09_error.txt", error("Something went wrong."))
    result = error("Nope.", code="FORBIDDEN")
    assert result.is_error is True
    assert result.blocks == (
        '<tool_error code="FORBIDDEN" severity="error">\n<message>Nope.</message>\n</tool_error>',
    )


def test_required_helper() -> None:
    """SPEC §9: required(field) names the missing field and how to recover."""
    result = required("invoice_id")
    assert_golden("s09_required.txt", result)
    assert result.is_error is True
    parsed = parse(result.to_mcp()["content"]).error
    assert parsed is not None
    assert "invoice_id" in parsed.message


def test_envelopes_parse_back() -> None:
    """SPEC §9: a client reads code, severity and message back from the envelope."""
    parsed = parse(tool_error("C&D", "a < b & c", severity="warning").blocks).error
    assert parsed is not None
    assert (parsed.code, parsed.severity, parsed.message) == ("C&D", "warning", "a < b & c")


def test_validation_error_template() -> None:
    """SPEC §9: the <validation_error> template (rendered here, emitted by the tools layer)."""
    text = validation_error(
        "billing/get_invoice",
        [("invoice_id", "Field required. You sent: nothing. Send a string id like INV-1")],
    )
    assert_golden("s09_validation_error.txt", text)
