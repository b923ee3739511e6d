"""SPEC §13: the testing side door — a structured view beside every built response."""

from __future__ import annotations

import copy
import dataclasses
import gc
import json
import pickle
import re
import uuid
import weakref
from collections.abc import Callable
from typing import Any

import pydantic
import pydantic_core
import pytest

from mcpfusion import (
    ResponseView,
    Suggestion,
    ToolResponse,
    as_response,
    require_view,
    response,
    success,
    success_structured,
    toon_success,
    ui,
    view_of,
)
from mcpfusion._present.response import with_view as attach_view
from mcpfusion.ui import UIBlock

ADAPTER = pydantic.TypeAdapter(ToolResponse)

# Names that only exist on the view; a serialized response never mentions them.
VIEW_ONLY_NAMES = ("ResponseView", "system_rules", "ui_blocks", "embeds", "UIBlock", "Suggestion")


def serialized_forms(result: ToolResponse) -> dict[str, str]:
    """Every way a response gets serialized: MCP dict, json, pydantic dumps, pickle, repr."""
    mcp = result.to_mcp()
    return {
        "json.dumps(to_mcp())": json.dumps(mcp, ensure_ascii=False),
        "pydantic_core.to_json(to_mcp())": pydantic_core.to_json(mcp).decode(),
        "pydantic_core.to_json(response)": pydantic_core.to_json(result).decode(),
        "TypeAdapter.dump_json": ADAPTER.dump_json(result).decode(),
        "TypeAdapter.dump_python(json)": json.dumps(
            ADAPTER.dump_python(result, mode="json"), ensure_ascii=False
        ),
        "dataclasses.asdict": repr(dataclasses.asdict(result)),
        "pickle": repr(pickle.dumps(result)),
        "repr": repr(result),
    }


def reachable(root: object) -> list[object]:
    """Objects reachable from ``root`` through references, not entering classes or modules.

    Classes are skipped because every class reaches its module and, from there, everything.
    """
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type) or type(obj).__name__ == "module":
            continue
        seen[id(obj)] = obj
        stack.extend(gc.get_referents(obj))
    return list(seen.values())


def assert_view_not_serialized(result: ToolResponse, markers: tuple[str, ...]) -> None:
    """Checks that nothing from ``view_of(result)`` shows up in a serialized form.

    ``markers`` are unique strings placed in the response's parts: each must occur in every
    serialized form exactly as often as on the wire, since a leaked view would repeat it.
    """
    view = require_view(result)
    wire = "\n".join(result.blocks)
    if result.structured_content is not None:
        wire += json.dumps(result.structured_content)
    for form, text in serialized_forms(result).items():
        for name in VIEW_ONLY_NAMES:
            assert name not in text, (form, name)
        for marker in markers:
            assert text.count(marker) == wire.count(marker), (form, marker)
    data = view.data
    # The view rides in a slot that is not a field: what a serializer can reach is the
    # three wire fields and the MCP dict. success_structured sends its data as
    # structuredContent by design, so that one is exempt.
    fields = (result.blocks, result.is_error, result.structured_content)
    if isinstance(data, dict | list) and data is not result.structured_content:
        for obj in (fields, result.to_mcp()):
            assert all(found is not data for found in reachable(obj)), "data object reachable"
            assert all(found is not view for found in reachable(obj)), "view reachable"


def _marker() -> str:
    return uuid.uuid4().hex


def _rich() -> tuple[ToolResponse, tuple[str, ...]]:
    m = [_marker() for _ in range(7)]
    built = (
        response({"id": m[0], "rows": [{"x": m[0]}]})
        .ui(ui.table(["h"], [[m[1]]], title=m[2], width="half", priority=0))
        .embed(ui.markdown(m[3]))
        .directive(m[4])
        .rule(m[5])
        .suggest("billing.remind", m[6])
        .build()
    )
    return built, tuple(m)


BUILDERS: dict[str, Callable[[], tuple[ToolResponse, tuple[str, ...]]]] = {
    "builder": _rich,
    "success": lambda: (success({"k": (m := _marker())}), (m,)),
    "success(str)": lambda: (success(m := _marker()), (m,)),
    "success(None)": lambda: (success(None), ()),
    "toon_success": lambda: (toon_success([{"k": (m := _marker())}]), (m,)),
    "success_structured": lambda: (success_structured({"k": (m := _marker())}), (m,)),
    "as_response(dict)": lambda: (as_response({"k": (m := _marker())}), (m,)),
    "as_response(builder)": lambda: (as_response(response(1).rule(m := _marker())), (m,)),
}


@pytest.mark.parametrize("make", BUILDERS.values(), ids=BUILDERS.keys())
def test_view_reachable_from_every_built_response(make: Any) -> None:
    """SPEC §13: view_of() returns the structured view of every builder-made response."""
    result, _ = make()
    assert isinstance(view_of(result), ResponseView)
    assert view_of(result) is view_of(result)


@pytest.mark.parametrize("make", BUILDERS.values(), ids=BUILDERS.keys())
def test_view_never_serialized(make: Any) -> None:
    """SPEC §13: no JSON, pydantic dump, pickle or MCP dict of a response contains its view."""
    result, markers = make()
    assert_view_not_serialized(result, markers)


def test_view_holds_the_parts_exactly() -> None:
    """SPEC §13: the view carries data, rules, UI blocks, directives, suggestions and embeds."""
    data = {"id": "INV-1"}
    chart = ui.summary("s", priority=0)
    child = ui.markdown("child")
    result = (
        response(data)
        .suggest("billing.remind", "Overdue\nnow")
        .rule("r1", "r1", "r2")
        .embed(child)
        .directive("d")
        .ui(chart)
        .build()
    )
    assert view_of(result) == ResponseView(
        data=data,
        system_rules=("r1", "r2"),
        ui_blocks=(chart,),
        directives=("d",),
        suggestions=(Suggestion("billing.remind", "Overdue now"),),
        embeds=(child,),
    )
    view = require_view(result)
    assert view.data is data


def test_view_data_is_the_raw_value_not_the_wire_text() -> None:
    """SPEC §13: the view keeps the un-neutralized data, which never reaches any serialization."""
    secret = "<domain_rules>" + _marker()
    result = success(secret)
    view = require_view(result)
    assert view.data == secret
    for form, text in serialized_forms(result).items():
        assert secret not in text, form
        assert secret.replace("<", "\\u003c") not in text, form


def test_response_fields_are_only_the_wire_parts() -> None:
    """SPEC §13: a ToolResponse has no field that could hold the view."""
    assert [f.name for f in dataclasses.fields(ToolResponse)] == [
        "blocks",
        "is_error",
        "structured_content",
        "annotations",
        "attachments",
    ]


def test_copies_do_not_carry_the_view() -> None:
    """SPEC §13: the view belongs to the built response, not to copies rebuilt from its fields."""
    result, _ = _rich()
    assert view_of(pickle.loads(pickle.dumps(result))) is None
    assert view_of(copy.deepcopy(result)) is None
    assert view_of(ToolResponse(result.blocks)) is None


def test_leak_detector_catches_a_leaked_view() -> None:
    """SPEC §13: the leak check fails for a response that carries its view when serialized."""
    result, markers = _rich()
    view = require_view(result)
    fields = ("data", "system_rules", "ui_blocks", "directives", "suggestions", "embeds")
    as_fields = pydantic_core.to_jsonable_python({name: getattr(view, name) for name in fields})
    leaky = attach_view(ToolResponse(result.blocks, structured_content=as_fields), view)
    # The first check to fail names the form and the view-only name found in it.
    leaked_rules = "^" + re.escape("('json.dumps(to_mcp())', 'system_rules')")
    with pytest.raises(AssertionError, match=leaked_rules):
        assert_view_not_serialized(leaky, markers)
    # The view as pydantic dumps it by default (for a named tuple, a list with no names).
    as_dumped = {"view": pydantic_core.to_jsonable_python(view)}
    leaky = attach_view(ToolResponse(result.blocks, structured_content=as_dumped), view)
    with pytest.raises(AssertionError, match=leaked_rules):
        assert_view_not_serialized(leaky, markers)
    # Only the data object, by identity, with no view field names.
    leaky = attach_view(ToolResponse(result.blocks, structured_content={"x": view.data}), view)
    with pytest.raises(AssertionError, match=r"^data object reachable"):
        assert_view_not_serialized(leaky, ())


def test_equal_blocks_make_equal_responses() -> None:
    """SPEC §13: the view is not part of a response's value; equal blocks are equal responses."""
    assert success(1) == success(1)
    assert hash(success(1)) == hash(success(1))
    assert response(1).rule("r").build() == response(1).rule("r").build()
    assert success(1) != success(2)


def test_view_is_released_with_its_response() -> None:
    """SPEC §13: the side door holds no strong reference that keeps responses alive."""
    result, _ = _rich()
    probe = weakref.ref(result)
    del result
    gc.collect()
    assert probe() is None


def test_ui_blocks_in_view_are_values() -> None:
    """SPEC §13: view UI blocks are the UIBlock values added, in order."""
    blocks = (ui.markdown("a"), ui.json([1]))
    result = response(None).ui(*blocks).build()
    view = require_view(result)
    assert view.ui_blocks == blocks
    assert all(isinstance(block, UIBlock) for block in view.ui_blocks)
