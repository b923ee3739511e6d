"""Loading the app a command names and reading ``key=value`` arguments.

Shared by the ``mcpfusion`` command (``mcpfusion.cli`` re-exports these names) and its
``dev`` console, which both import this module and neither imports the other.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from mcpfusion._app.app import Fusion
from mcpfusion._errors import DefinitionError

USAGE_ERROR = 2
"""Exit status for a bad target (including a definition mistake in its tools), an unknown
tool or a malformed argument."""


class UsageError(Exception):
    """A mistake on the command line, reported as one line and exit status 2."""


def run_command(args: argparse.Namespace) -> int:
    """Runs the parsed command's ``args.handler``: its exit status, ``USAGE_ERROR`` for a
    ``UsageError`` or a ``DefinitionError`` (one line on stderr), 130 on Ctrl-C.

    The one entry of ``mcpfusion`` and of ``mcpfusion dev`` run on its own. Diagnostics go
    to stderr: on stdio, stdout carries nothing but protocol messages.
    """
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("mcpfusion").setLevel(logging.INFO)
    try:
        status: int = args.handler(args)
    except (UsageError, DefinitionError) as exc:
        # A definition mistake (say, a tool without actions) is the target's fault, found
        # when its tools are first listed: one line, like any other bad target.
        print(f"mcpfusion: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        return 130
    return status


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    path = path.resolve()
    loaded = sys.modules.get(path.stem)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    # Sibling modules of the file must be importable, as when it is run as a script.
    sys.path.insert(0, str(path.parent))
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else "__target__"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, so pydantic and dataclasses can resolve the module.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _import_module(name: str) -> ModuleType:
    # The current directory first, as for `python -m`: `examples.billing:app` from the repo.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise UsageError(f"no module named '{name}'") from None
        raise


def load_app(target: str) -> Fusion:
    """The app named by ``module:attr`` or ``path/to/file.py:attr`` (``attr`` defaults to app).

    ``attr`` may also name a function taking no arguments that returns the app.

    Raises:
        UsageError: the module or attribute does not exist, importing it failed, or the
            attribute is not an mcpfusion app.
    """
    where, sep, attr = target.rpartition(":")
    if not sep or not all(part.isidentifier() for part in attr.split(".")):
        where, attr = target, "app"  # no attribute given (or a Windows drive's colon)
    if not where:
        raise UsageError(f"bad target '{target}': expected module:app or path/to/file.py:app")
    is_file = where.endswith(".py") or "/" in where or os.sep in where
    try:
        module = _import_file(Path(where)) if is_file else _import_module(where)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"importing '{where}' failed: {type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"'{where}' has no attribute '{attr}'")
        obj = getattr(obj, part)
    if inspect.isfunction(obj):
        # A factory (`module:create_app`), for apps that need set-up before they exist.
        try:
            obj = obj()
        except Exception as exc:
            raise UsageError(
                f"calling the factory '{where}:{attr}' failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(obj, Fusion):
        raise UsageError(f"'{where}:{attr}' is a {type(obj).__name__}, not an mcpfusion app")
    return obj


def _types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a parameter schema admits, looking into ``anyOf`` and ``oneOf``."""
    declared = schema.get("type")
    found = {declared} if isinstance(declared, str) else set(declared or ())
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or ():
            if isinstance(branch, Mapping):
                found |= _types(branch)
    return found


def _value(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """A ``key=value`` value: JSON when it parses, else the raw string.

    A parameter that admits a string (``str``, ``str | None``, ``int | str``) keeps digits
    and words as typed (``id=0042``, ``id=true``); ``null`` is still ``None`` when the
    parameter admits it, and quoting still works (``id='"x"'``).
    """
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, str) or schema is None:
        return value
    types = _types(schema)
    if "string" not in types or (value is None and "null" in types):
        return value
    return raw


def parse_arguments(tool: Mapping[str, Any], words: Sequence[str]) -> dict[str, Any]:
    """The call's arguments from ``[ACTION] key=value ...``.

    Raises:
        UsageError: a word is not ``key=value``, a key repeats, or an action is given to a
            tool without actions.
    """
    properties: Mapping[str, Any] = tool.get("inputSchema", {}).get("properties", {})
    arguments: dict[str, Any] = {}
    rest = list(words)
    if rest and "=" not in rest[0]:
        if "action" not in properties:
            raise UsageError(
                f"tool '{tool['name']}' has no actions; expected key=value, got '{rest[0]}'"
            )
        arguments["action"] = rest.pop(0)
    for word in rest:
        key, sep, raw = word.partition("=")
        if not sep or not key:
            raise UsageError(f"bad argument '{word}': expected key=value")
        if key in arguments:
            raise UsageError(f"argument '{key}' given twice")
        arguments[key] = _value(raw, properties.get(key))
    return arguments
