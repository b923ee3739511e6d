"""An app whose answers are capped: rows through a Presenter, and structured rows."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mcpfusion import Fusion, Presenter, ui


class Row(BaseModel):
    """A row as the model sees it."""

    id: int
    name: str


rows_view = Presenter("Row", schema=Row, rules=["Ids are stable."])


@rows_view.collection_ui
def _table(rows: list[dict[str, Any]], ctx: Any) -> list[Any]:
    return [ui.table(["id", "name"], [[r["id"], r["name"]] for r in rows])]


app = Fusion("capped", version="1.0.0", max_bytes=1200)


def _rows(count: int) -> list[dict[str, Any]]:
    # Multi-byte names: a cut inside a character would show as invalid UTF-8.
    return [{"id": n, "name": f"ñandú 😀 {n}"} for n in range(count)]


@app.tool("rows", description="Rows.").action(read_only=True, returns=rows_view)
def listing(count: int = 200) -> list[dict[str, Any]]:
    """Rows through a Presenter."""
    return _rows(count)


@app.tool("records", description="Records.").action(
    read_only=True, output_schema=list[Row], max_bytes=800
)
def records(count: int = 200) -> list[dict[str, Any]]:
    """Rows as structured output."""
    return _rows(count)


@app.tool("note", description="A note.").action(read_only=True)
def note(size: int = 5000) -> dict[str, Any]:
    """One object with one huge field."""
    return {"id": 1, "text": "é" * size}
