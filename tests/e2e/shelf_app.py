"""An app with resources and prompts: what a client lists, reads and gets besides tools."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from mcpfusion import Fusion, Message, Presenter, ToolError, assistant, messages_from_view, user

BOOKS: dict[int, dict[str, Any]] = {
    1: {"id": 1, "title": "Dune", "pages": 412, "shelf": "A-3", "isbn_secret": "x"},
    2: {"id": 2, "title": "Solaris — ünïcode", "pages": 204, "shelf": "B-1", "isbn_secret": "y"},
}


class Book(BaseModel):
    """A book as the reader sees it."""

    id: int
    title: str
    pages: int


book_view = Presenter("Book", schema=Book, rules=["pages counts printed pages."])

app = Fusion("shelf", data_format="json", ui_audience="all", definitions="full", version="0.1.0")
app.tool("books", description="Book lookups.").action("count", read_only=True)(lambda: len(BOOKS))
app.resource(
    "shelf://readme", name="readme", mime_type="text/plain", description="What the shelf holds."
)(lambda: "Books by id: shelf://books/{book_id}.")


@app.resource("shelf://books/{book_id}", returns=book_view)
def book(book_id: int) -> dict[str, Any]:
    """One book, through its Presenter."""
    if book_id not in BOOKS:
        raise ToolError("NOT_FOUND", f"Book {book_id} does not exist.")
    return BOOKS[book_id]


@app.prompt()
def review(book_id: int, tone: Literal["kind", "blunt"] = "kind") -> list[Message]:
    """Asks for a review of one book."""
    return [
        user(f"Write a {tone} review of book {book_id}."),
        *messages_from_view(book_view, BOOKS[book_id]),
        assistant("Here is my review:"),
    ]
