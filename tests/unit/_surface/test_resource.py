"""Resources: definitions, URI templates, reads and their errors, cache hints."""

from __future__ import annotations

import logging
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from mcpfusion import (
    Context,
    DefinitionError,
    Fusion,
    Identity,
    Presenter,
    SurfaceError,
    ToolError,
)
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


class Row(BaseModel):
    """What a reader may see of a row."""

    id: int


def test_a_template_lists_its_variables_and_state_name() -> None:
    """Variables come from the URI; the state name is scheme.first-segment."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")
    found = app.resource("shop://orders/{order_id}/lines/{line}")(lambda order_id, line: "x")
    assert found.variables == ("order_id", "line")
    assert found.is_template and found.state_name == "shop.orders"
    assert found.match("shop://orders/7/lines/a%20b") == {"order_id": "7", "line": "a b"}
    assert found.match("shop://orders/7/lines/") is None
    assert found.match("shop://orders/7/x/1") is None


def test_definition_mistakes_fail_at_definition() -> None:
    """No scheme, parameters that are not the variables, bad options, duplicates."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")
    with pytest.raises(DefinitionError, match="must start with a scheme"):
        app.resource("orders/{id}")(lambda id: id)
    with pytest.raises(DefinitionError, match=r"parameters \(other\) must be the URI's variables"):
        app.resource("x://a/{id}")(lambda other: other)
    with pytest.raises(DefinitionError, match="fresh_for is a number of seconds"):
        app.resource("x://a", fresh_for=-1)(lambda: "a")
    with pytest.raises(DefinitionError, match="mime_type must be a MIME type"):
        app.resource("x://a", mime_type="text")(lambda: "a")
    app.resource("x://a")(lambda: "a")
    with pytest.raises(DefinitionError, match="already has a resource 'x://a'"):
        app.resource("x://a")(lambda: "b")
    app.freeze()
    with pytest.raises(DefinitionError, match="is frozen"):
        app.resource("x://b")


def test_lists_split_fixed_uris_from_templates_and_hide_what_needs_scopes() -> None:
    """resources/list has fixed URIs, templates/list the rest; scopes hide both."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")

    @app.resource("x://fixed", mime_type="text/plain")
    def fixed() -> str:
        """A fixed one.

        More text that is not listed.
        """
        return "f"

    app.resource("x://rows/{id}", returns=Presenter("Row", Row), requires={"r"})(lambda id: {})
    assert FusionTester(app).list_resources() == [
        {
            "uri": "x://fixed",
            "name": "fixed",
            "description": "A fixed one.",
            "mimeType": "text/plain",
        }
    ]
    tester = FusionTester(app)
    assert tester.list_resource_templates() == []
    assert app.surface.list_resource_templates() == [
        {"uriTemplate": "x://rows/{id}", "name": "<lambda>", "mimeType": "application/json"}
    ]


def test_cache_scope_is_private_when_the_answer_depends_on_who_asks() -> None:
    """Context or scopes make reads private; fresh_for sets ttlMs; cache_scope overrides."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")
    assert app.resource("x://a")(lambda: "a").cache_scope == "public"

    def by_caller(ctx: Context) -> str:
        return "c"

    assert app.resource("x://c")(by_caller).cache_scope == "private"
    assert app.resource("x://d", requires={"s"})(lambda: "d").cache_scope == "private"
    public = app.resource("x://e", cache_scope="public", fresh_for=1.5)(by_caller)
    assert (public.cache_scope, public.ttl_ms) == ("public", 1500)


async def test_a_read_validates_variables_like_action_parameters() -> None:
    """A typed variable is converted; a bad one is an 'invalid' error naming the field."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")

    @app.resource("x://rows/{id}", returns=Presenter("Row", Row))
    def row(id: Annotated[int, Field(ge=1)]) -> dict[str, object]:
        return {"id": id, "secret": "s"}

    tester = FusionTester(app)
    read = await tester.read_resource("x://rows/5")
    assert read.contents[0]["text"] == '{\n  "id": 5\n}'
    assert read.response is not None
    with pytest.raises(SurfaceError, match="id: Input should be greater than or equal to 1") as bad:
        await tester.read_resource("x://rows/0")
    assert (bad.value.kind, bad.value.uri) == ("invalid", "x://rows/0")


async def test_unknown_uris_and_failures_read_as_errors_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Unknown URI: not_found; NOT_FOUND ToolError: not_found; anything else: logged, failed."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")

    @app.resource("x://rows/{id}")
    def row(id: str) -> str:
        if id == "gone":
            raise ToolError("NOT_FOUND", "Row gone does not exist.", recovery="List rows.")
        if id == "busy":
            raise ToolError("BUSY", "Try later.")
        raise RuntimeError("secret path /etc/x")

    tester = FusionTester(app)
    with pytest.raises(SurfaceError, match="Resource not found") as unknown:
        await tester.read_resource("y://nothing")
    assert unknown.value.kind == "not_found"
    with pytest.raises(SurfaceError, match=r"Row gone does not exist\. List rows\.") as gone:
        await tester.read_resource("x://rows/gone")
    assert gone.value.kind == "not_found"
    with pytest.raises(SurfaceError, match="Try later") as busy:
        await tester.read_resource("x://rows/busy")
    assert busy.value.kind == "failed"
    with (
        caplog.at_level(logging.ERROR, logger="mcpfusion"),
        pytest.raises(SurfaceError, match="failed with an internal error") as crash,
    ):
        await tester.read_resource("x://rows/boom")
    assert "/etc/x" not in str(crash.value)
    assert "RuntimeError" in caplog.text


async def test_a_handler_gets_the_caller_and_the_lifespan_state() -> None:
    """Context injection gives the identity; a fixed URI wins over a matching template."""
    app = Fusion("app", data_format="json", ui_audience="all", definitions="full")
    app.resource("x://who/{name}")(lambda name: f"template {name}")

    @app.resource("x://who/me")
    def me(ctx: Context) -> str:
        return ctx.identity.subject if ctx.identity else "anonymous"

    tester = FusionTester(app, identity=Identity("ann"))
    assert (await tester.read_resource("x://who/me")).contents[0]["text"] == "ann"
    assert (await tester.read_resource("x://who/bob")).contents[0]["text"] == "template bob"
