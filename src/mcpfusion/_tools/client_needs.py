"""What an action needs of the client before it runs: ``requires_client=`` and ``confirm=``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from mcpfusion._errors import DefinitionError
from mcpfusion._present.failures import not_confirmed, unsupported_by_client
from mcpfusion._tools.client import FEATURES, Caller, ClientLacks, Feature, elicit, logger, supports
from mcpfusion._wire.datablock import to_jsonable

Unsupported = Literal["refuse", "proceed"]


@dataclass(frozen=True, slots=True)
class Confirm:
    """How an action asks the user before it runs (``confirm=``).

    Attributes:
        message: the question; ``{name}`` placeholders take the validated arguments
            (``"Mark {invoice_id} as paid?"``). By default it names the action.
        unsupported: for a client that cannot ask: ``"refuse"`` (the call is
            ``UNSUPPORTED_BY_CLIENT``, the default) or ``"proceed"`` (it runs unasked).

    Raises:
        DefinitionError: on a message that is not a str, or another policy.
    """

    message: str = ""
    unsupported: Unsupported = "refuse"

    def __post_init__(self) -> None:
        if not isinstance(self.message, str):
            raise DefinitionError(f"Confirm's message is a str; got {self.message!r}")
        if self.unsupported not in ("refuse", "proceed"):
            raise DefinitionError(
                f"Confirm's unsupported= is 'refuse' or 'proceed'; got {self.unsupported!r}"
            )


CONFIRM_SCHEMA: Final = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm", "default": False}},
    "required": ["confirm"],
}
"""What a confirmation asks: one boolean."""


def confirm_option(owner: str, confirm: object) -> Confirm | None:
    """``confirm=`` as a ``Confirm``: ``True``, a message, or a ``Confirm``.

    Raises:
        DefinitionError: on anything else.
    """
    if confirm is None or confirm is False:
        return None
    if confirm is True:
        return Confirm()
    if isinstance(confirm, str):
        return Confirm(confirm)
    if isinstance(confirm, Confirm):
        return confirm
    raise DefinitionError(f"{owner}: confirm= takes True, a message or a Confirm; got {confirm!r}")


def features_option(owner: str, features: object) -> frozenset[Feature]:
    """``requires_client=`` as a set of features.

    Raises:
        DefinitionError: on a name that is none of ``FEATURES``.
    """
    if isinstance(features, str) or not isinstance(features, Sequence | frozenset | set):
        raise DefinitionError(f"{owner}: requires_client is a list of features, e.g. ['sampling']")
    unknown = [f for f in features if f not in FEATURES]
    if unknown:
        raise DefinitionError(
            f"{owner}: requires_client names {', '.join(map(repr, unknown))}; "
            f"features: {', '.join(FEATURES)}"
        )
    return frozenset(features)


CONFIRM_PREFIX: Final = "confirm:"
"""The key of a confirmation's question, before the digest of what it confirms."""


def confirm_key(request: Caller, kwargs: Mapping[str, Any]) -> str:
    """The key a confirmation is asked and answered under: sealed with a digest of the
    tool, the action and the arguments, so that an answer given for one call (paying one
    invoice) is never taken for another (paying another), on MCP 2026-07-28 where the
    answer comes back with a later round of the call."""
    what = [request.tool, request.action, to_jsonable(dict(kwargs))]
    text = json.dumps(what, sort_keys=True, default=repr, ensure_ascii=False)
    return CONFIRM_PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


async def before_running(
    request: Caller,
    kwargs: Mapping[str, Any],
    confirm: Confirm | None,
    features: frozenset[Feature],
) -> None:
    """Checks what an action needs of the client, then asks for its confirmation.

    Raises:
        ToolError: ``UNSUPPORTED_BY_CLIENT`` or ``NOT_CONFIRMED``.
    """
    for feature in sorted(features):
        if not supports(request, feature):
            if getattr(request.client, "protocol_refusals", False):
                raise ClientLacks(feature)
            raise unsupported_by_client(feature, request.tool, request.action)
    if confirm is None:
        return
    if not supports(request, "elicitation"):
        if confirm.unsupported == "proceed":
            return
        raise unsupported_by_client("elicitation", request.tool, request.action)
    message = confirm.message or f"Run {request.tool}.{request.action}?"
    try:
        message = message.format_map(dict(kwargs))
    except (KeyError, IndexError, ValueError, AttributeError):
        logger.warning("%s/%s: the confirm message names no argument", request.tool, request.action)
    answer = await elicit(request, message, CONFIRM_SCHEMA, key=confirm_key(request, kwargs))
    if not answer.accepted:
        raise not_confirmed(request.tool, request.action, f"the user chose {answer.action}")
    if answer.data.get("confirm") is not True:
        raise not_confirmed(request.tool, request.action, "the user did not tick confirm")
