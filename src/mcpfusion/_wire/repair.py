"""Data the JSON encoder refuses but the wire can carry: ``MISSING`` left out, lone surrogates.

pydantic's ``MISSING`` sentinel means "absent": a dict entry or list item holding it is left
out, as a model's dump leaves out a ``MISSING`` field. A lone surrogate (as ``json.loads``
returns for ``"\\ud800"``) cannot be encoded as UTF-8: it becomes U+FFFD, as in every other
text the framework writes. Both are rare, so the encoders try the data as it is and come here
only when that fails.
"""

from __future__ import annotations

import re
from typing import Any, Final

import pydantic_core

try:
    from pydantic import MISSING as MISSING  # re-exported: the one import of the sentinel
except ImportError:  # pragma: no cover - pydantic 2.12 and 2.13 keep it experimental
    from pydantic.experimental.missing_sentinel import MISSING as MISSING

_SURROGATES: Final = re.compile("[\ud800-\udfff]")


def repaired(value: Any) -> Any:
    """``value`` as plain JSON data, without ``MISSING`` entries and with U+FFFD for surrogates.

    Returns ``value`` itself (unchanged) when the conversion fails: the caller's encoder then
    reports the real problem.
    """
    try:
        plain = pydantic_core.to_jsonable_python(_walk(value, set()), inf_nan_mode="null")
        return _walk(plain, set())  # strings that were inside models and dataclasses
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError, RecursionError):
        return value


def _walk(value: Any, path: set[int]) -> Any:
    """A copy of plain containers without MISSING, surrogates replaced.

    Raises:
        ValueError: on a container that holds itself.
    """
    if isinstance(value, str):
        # isascii() is O(1) (a flag of the str): a base64 blob costs no scan.
        return value if value.isascii() else _SURROGATES.sub("\ufffd", value)
    if not isinstance(value, dict | list | tuple):
        return value
    if id(value) in path:
        raise ValueError("circular reference")
    path.add(id(value))
    if isinstance(value, dict):
        copy: Any = {_walk(k, path): _walk(v, path) for k, v in value.items() if v is not MISSING}
    else:
        copy = [_walk(item, path) for item in value if item is not MISSING]
    path.discard(id(value))
    return copy
