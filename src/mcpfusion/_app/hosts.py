"""What an app knows of the hosts that connect to it, by their ``clientInfo.name``."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from mcpfusion._errors import DefinitionError

IGNORES_AUDIENCE: Final = frozenset({"claude-code"})
"""Hosts known to send blocks annotated ``audience: ["user"]`` to the model as well
(Claude Code: anthropics/claude-code #18034, #72239): UI blocks for the user are left out
of their answers, so the model does not read the rows twice."""


def hosts_option(owner: str, hosts: Collection[str] | None) -> frozenset[str]:
    """The ``clientInfo`` names of ``hosts_ignoring_audience=`` (``None``: the known ones).

    Raises:
        DefinitionError: on a str (one name, not a collection) or a name that is no str.
    """
    if hosts is None:
        return IGNORES_AUDIENCE
    if isinstance(hosts, str) or not isinstance(hosts, Collection):
        raise DefinitionError(
            f"{owner}: hosts_ignoring_audience is a collection of clientInfo names, e.g. "
            "{'claude-code'}"
        )
    if not all(isinstance(name, str) and name for name in hosts):
        raise DefinitionError(f"{owner}: every name in hosts_ignoring_audience is a non-empty str")
    return frozenset(hosts)
