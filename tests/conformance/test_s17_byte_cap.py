"""SPEC §17: the byte cap of an answer: UI blocks first, then rows, whole; TOO_LARGE beyond."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import toon_format
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Presenter, ToolError, response, ui
from mcpfusion.testing import FusionTester
from tests.conformance.golden import assert_golden
from tests.conformance.sample_app import PINNED

pytestmark = pytest.mark.anyio


class Row(BaseModel):
    """A row as the model sees it."""

    id: int
    name: str


rows_view = Presenter("Row", schema=Row, rules=["Ids are stable."])


@rows_view.collection_ui
def _table(rows: list[dict[str, Any]], ctx: Any) -> list[Any]:
    return [
        ui.table(["id", "name"], [[r["id"], r["name"]] for r in rows]),
        ui.markdown("Chart placeholder " + "=" * 200),
    ]


class Out(BaseModel):
    """One structured row."""

    id: int
    name: str


def _rows(count: int, name: str = "row") -> list[dict[str, Any]]:
    return [{"id": n, "name": f"{name} {n}"} for n in range(count)]


def _app(cap: int | None = None, *, action_cap: int | None = None, **style: Any) -> Fusion:
    app = Fusion("capped", max_bytes=cap, **{**PINNED, **style})
    tool = app.tool("items", description="Items.")

    @tool.action(read_only=True, returns=rows_view, max_bytes=action_cap)
    def rows(count: int = 20, name: str = "row") -> list[dict[str, Any]]:
        """Rows through a Presenter with two UI blocks."""
        return _rows(count, name)

    @app.tool("records", description="Records.").action(read_only=True, output_schema=list[Out])
    def structured(count: int = 50, name: str = "row") -> list[dict[str, Any]]:
        """Rows as structured output."""
        return _rows(count, name)

    @tool.action(read_only=True)
    def one(size: int = 5000) -> dict[str, Any]:
        """One object with one huge field."""
        return {"id": 1, "text": "x" * size}

    @tool.action(read_only=True)
    def built(size: int = 0) -> Any:
        """A response the handler built, with a big UI block."""
        data = {"id": 1, "text": "d" * size} if size else {"id": 1}
        return response(data).ui(ui.markdown("y" * 2000)).rule("Built by hand.")

    @tool.action()
    def fail() -> None:
        """A handler error with a long message."""
        raise ToolError("NOPE", "z" * 1500)

    @tool.action(invalidates=["items.*"])
    def touch(count: int = 30) -> list[dict[str, Any]]:
        """A mutation returning rows."""
        return _rows(count)

    return app


def _size(blocks: tuple[str, ...]) -> int:
    return sum(len(block.encode("utf-8")) for block in blocks)


async def _call(app: Fusion, action: str, **arguments: Any) -> Any:
    return await FusionTester(app).call("items", action, **arguments)


async def test_an_answer_within_its_cap_is_sent_unchanged() -> None:
    """An answer exactly at its cap is byte for byte the uncapped answer."""
    free = await _call(_app(), "rows", count=3)
    size = _size(free.response.blocks)
    capped = await _call(_app(size), "rows", count=3)
    assert capped.response.blocks == free.response.blocks


async def test_ui_blocks_go_first_the_last_first() -> None:
    """Over the cap, the last UI block is left out first and a notice, the first UI block
    and unannotated, says so; data and rules stay."""
    free = await _call(_app(), "rows", count=3)
    cap = _size(free.response.blocks) - 40
    result = await _call(_app(cap), "rows", count=3)
    assert _size(result.response.blocks) <= cap
    assert_golden("s17_ui_left_out.txt", result.response)
    assert result.response.blocks[0] == free.response.blocks[0]
    assert result.system_rules == ("Ids are stable.",)
    assert result.raw["content"][1].get("annotations") is None


async def test_rows_go_next_whole_and_leading() -> None:
    """Without UI blocks still over the cap, the answer keeps the longest leading run of
    whole rows that fits, and says how many of how many were left out."""
    result = await _call(_app(600), "rows", count=20)
    assert _size(result.response.blocks) <= 600
    assert_golden("s17_rows_left_out.txt", result.response)
    sent = json.loads(result.response.blocks[0])
    assert sent == _rows(len(sent))
    more = await _call(_app(600 + 200), "rows", count=20)
    assert len(json.loads(more.response.blocks[0])) > len(sent)


@pytest.mark.parametrize("data_format", ["json", "compact", "toon"])
async def test_every_cap_keeps_the_data_decodable_in_every_format(data_format: str) -> None:
    """At every cap, multi-byte characters (2-4 bytes) at the boundary included, the answer
    fits and its data block decodes to whole leading rows."""
    name = "é😀ü" * 3
    for cap in range(400, 1400, 37):
        app = _app(cap, data_format=data_format)
        result = await _call(app, "rows", count=30, name=name)
        assert not result.is_error
        assert _size(result.response.blocks) <= cap
        text = result.response.blocks[0]
        sent = toon_format.decode(text) if data_format == "toon" else json.loads(text)
        assert sent == _rows(len(sent), name)


async def test_structured_content_still_fits_the_output_schema() -> None:
    """Capped structured output is whole rows, still valid against its outputSchema, and
    its text block is still the JSON of exactly the structured content."""
    app = _app(900)
    schema = next(t for t in app.list_tools() if t["name"] == "records")["outputSchema"]
    result = await FusionTester(app).call("records", "structured", count=50, name="ñ" * 7)
    content = result.raw["structuredContent"]
    jsonschema.validate(content, schema)
    assert content["result"] == _rows(len(content["result"]), "ñ" * 7)
    assert 0 < len(content["result"]) < 50
    assert json.loads(result.response.blocks[0]) == content
    assert _size(result.response.blocks) <= 900


async def test_a_row_too_large_alone_ends_the_run_before_it() -> None:
    """A hostile row with one huge field: the rows before it are sent, it and the rest
    are left out, nothing is cut."""
    app = _app(700)
    tester = FusionTester(app)

    @app.tools["items"].action(read_only=True, returns=rows_view)
    def hostile() -> list[dict[str, Any]]:
        """Rows, the fourth holding a huge name."""
        found = _rows(8)
        found[3]["name"] = "€" * 10_000
        return found

    result = await tester.call("items", "hostile")
    assert json.loads(result.response.blocks[0]) == _rows(3)
    assert "5 of 8 rows left out" in result.response.blocks[1]


@pytest.mark.parametrize(
    ("action", "arguments"),
    [("one", {"size": 5000}), ("built", {"size": 900}), ("rows", {"count": 3, "name": "w" * 3000})],
)
async def test_a_value_too_large_alone_is_too_large(action: str, arguments: dict[str, Any]) -> None:
    """One huge field, a handler's own response, a first row over the cap: TOO_LARGE,
    never a cut value nor an empty list."""
    result = await _call(_app(500), action, **arguments)
    assert result.is_error
    assert result.error_code == "TOO_LARGE"
    assert "over its cap of 500 bytes" in result.response.blocks[0]


async def test_too_large_envelope() -> None:
    """The TOO_LARGE envelope names the tool, the action, the size and the cap."""
    result = await _call(_app(500), "one", size=5000)
    assert_golden("s17_too_large.txt", result.response)


async def test_a_handlers_response_loses_its_ui_block_first() -> None:
    """A response the handler built keeps its data and rules when its UI block goes."""
    result = await _call(_app(300), "built")
    assert not result.is_error
    assert result.system_rules == ("Built by hand.",)
    assert json.loads(result.response.blocks[0]) == {"id": 1}
    assert "1 UI block left out" in result.response.blocks[1]


async def test_errors_are_sent_whole() -> None:
    """An error envelope is never capped."""
    result = await _call(_app(200), "fail")
    assert result.error_code == "NOPE"
    assert "z" * 1500 in result.response.blocks[0]


async def test_an_actions_cap_wins_over_the_apps() -> None:
    """An action's max_bytes applies instead of the app's."""
    roomy = await _call(_app(100_000, action_cap=600), "rows", count=20)
    assert _size(roomy.response.blocks) <= 600
    tight = await _call(_app(300, action_cap=100_000), "rows", count=20)
    assert tight.response.blocks == (await _call(_app(), "rows", count=20)).response.blocks


async def test_the_invalidation_block_is_added_after_the_cap() -> None:
    """A capped mutation still ends with its invalidation block."""
    result = await _call(_app(500), "touch", count=30)
    assert result.invalidations == ("items.*",)
    assert result.response.blocks[-1].startswith("<cache_invalidation")
    assert _size(result.response.blocks[:-1]) <= 500


@pytest.mark.parametrize("bad", [0, -5, 1.5, "100", True])
def test_a_cap_that_is_no_positive_int_fails_at_definition(bad: Any) -> None:
    """max_bytes on the app or an action is a positive int or None, checked when defined."""
    with pytest.raises(DefinitionError, match="max_bytes is a positive int or None"):
        Fusion("x", max_bytes=bad)
    tool = Fusion("y").tool("t")
    with pytest.raises(DefinitionError, match="max_bytes is a positive int or None"):
        tool.action("a", max_bytes=bad)(lambda: None)


async def test_a_page_keeps_its_rows_under_a_cap() -> None:
    """A paging action's page loses only UI blocks to the cap (its next-page suggestion
    keeps the cursor): the cursor names the row after the page, so a page still over the
    cap is TOO_LARGE, never fewer rows."""
    view = Presenter("Row", schema=Row, limit=5)
    view.collection_ui(lambda rows: ui.markdown("=" * 400))
    app = Fusion("paged", cursor_secret="s" * 32, **PINNED)
    app.tool("items").action("list", read_only=True, returns=view, paging=True)(lambda: _rows(40))
    free = await FusionTester(app).call("items", "list")
    app.max_bytes = _size(free.response.blocks) - 500
    lean = await FusionTester(app).call("items", "list")
    assert "2 UI blocks left out" in lean.text
    assert lean.structured_content is not None
    assert len(lean.structured_content["items"]) == 5
    assert '_cursor "' in lean.response.blocks[-1]
    app.max_bytes = _size(lean.response.blocks) - 60  # room for some rows, not the page's
    tight = await FusionTester(app).call("items", "list")
    assert tight.error_code == "TOO_LARGE"
