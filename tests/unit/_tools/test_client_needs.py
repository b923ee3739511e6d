"""What an action needs of the client: the confirm= and requires_client= options, the key."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from mcpfusion import Confirm, DefinitionError, Fusion
from mcpfusion._tools.client import ClientChannel
from mcpfusion._tools.client_needs import CONFIRM_PREFIX, confirm_key


@dataclass(frozen=True)
class Called:
    """A call as the confirmation reads it: its tool, its action, no client."""

    tool: str
    action: str
    client: ClientChannel | None = None


def test_action_options_are_checked_where_written() -> None:
    """confirm= and requires_client= reject what they cannot mean."""
    tool = Fusion("t").tool("t")
    with pytest.raises(DefinitionError, match="confirm= takes True, a message or a Confirm"):
        tool.action("a", confirm=3)(lambda: None)  # type: ignore[call-overload]
    with pytest.raises(DefinitionError, match="requires_client names 'telepathy'"):
        tool.action("b", requires_client=["telepathy"])(lambda: None)  # type: ignore[list-item]
    with pytest.raises(DefinitionError, match="'refuse' or 'proceed'"):
        Confirm(unsupported="maybe")  # type: ignore[arg-type]


def test_a_confirmation_key_is_sealed_with_what_it_confirms() -> None:
    """The key names the tool, the action and the arguments: another of them, another key."""
    key = confirm_key(Called("billing", "pay"), {"invoice_id": "A-1"})
    assert key.startswith(CONFIRM_PREFIX)
    assert key == confirm_key(Called("billing", "pay"), {"invoice_id": "A-1"})
    others = {
        confirm_key(Called("billing", "pay"), {"invoice_id": "A-2"}),
        confirm_key(Called("billing", "refund"), {"invoice_id": "A-1"}),
        confirm_key(Called("orders", "pay"), {"invoice_id": "A-1"}),
    }
    assert key not in others
    assert len(others) == 3
