"""Prompts: typed arguments, the messages a handler returns, and argument completion."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcpfusion import (
    Context,
    DefinitionError,
    Fusion,
    Image,
    Presenter,
    SurfaceError,
    assistant,
    messages_from_view,
    response,
    user,
)
from mcpfusion._surface.prompt import as_messages
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio


class Row(BaseModel):
    """What a reader may see of a row."""

    id: int


def test_arguments_come_from_the_signature() -> None:
    """Names, descriptions and required flags; injected parameters are not arguments."""
    app = Fusion("app")

    @app.prompt(description="Greets.")
    def greet(
        ctx: Context,
        name: Annotated[str, Field(description="Who to greet.")],
        times: int = 1,
    ) -> str:
        return f"hello {name}" * times

    assert greet.listing() == {
        "name": "greet",
        "description": "Greets.",
        "arguments": [
            {"name": "name", "required": True, "description": "Who to greet."},
            {"name": "times", "required": False},
        ],
    }


def test_definition_mistakes_fail_at_definition() -> None:
    """A duplicate name, *args, and completing an argument the prompt lacks."""
    app = Fusion("app")
    found = app.prompt("p")(lambda: "x")
    with pytest.raises(DefinitionError, match="already has a prompt 'p'"):
        app.prompt("p")(lambda: "y")
    with pytest.raises(DefinitionError, match=r"prompt 'q': \*args cannot be described"):

        @app.prompt("q")
        def q(*args: str) -> str:
            return ""

    with pytest.raises(DefinitionError, match="prompt 'p' has no argument 'nope'"):
        found.complete("nope")


async def test_string_arguments_are_validated_and_converted() -> None:
    """'3' becomes 3 for an int; a missing or bad argument is an 'invalid' error naming it."""
    app = Fusion("app")

    @app.prompt()
    def repeat(word: str, times: Annotated[int, Field(ge=1)]) -> str:
        return " ".join([word] * times)

    tester = FusionTester(app)
    result = await tester.get_prompt("repeat", word="hi", times="3")
    assert [m.text for m in result.messages] == ["hi hi hi"]
    with pytest.raises(SurfaceError, match="times: Input should be greater than or equal to 1"):
        await tester.get_prompt("repeat", word="hi", times="0")
    with pytest.raises(SurfaceError, match="word: Field required") as missing:
        await tester.get_prompt("repeat", times="1")
    assert missing.value.kind == "invalid"
    with pytest.raises(SurfaceError, match=r"Unknown prompt \"nope\"\. Prompts: repeat\."):
        await tester.get_prompt("nope")


def test_handler_values_become_messages() -> None:
    """str, Message, content, responses and lists of them; anything else is a TypeError."""
    image = Image(b"1")
    found = as_messages(["a", assistant("b"), image, response({"x": 1}).rule("r")])
    assert [(m.role, m.text) for m in found] == [
        ("user", "a"),
        ("assistant", "b"),
        ("user", None),
        ("user", '{\n  "x": 1\n}'),
        ("user", "<domain_rules>\n- r\n</domain_rules>"),
    ]
    assert found[2].to_mcp() == {"role": "user", "content": image.to_mcp()}
    with pytest.raises(TypeError, match="a prompt returns a str"):
        as_messages(42)
    with pytest.raises(TypeError, match="a message holds a str"):
        user(3)  # type: ignore[arg-type]


def test_messages_from_view_masks_like_a_tool() -> None:
    """The Presenter's schema mask applies: an undeclared field never reaches a message."""
    view = Presenter("Row", Row, rules=["ids are stable"], redact=[])
    messages = messages_from_view(view, {"id": 1, "password": "p"})
    assert "password" not in "".join(m.text or "" for m in messages)
    assert messages[-1].text == "<domain_rules>\n- ids are stable\n</domain_rules>"


async def test_a_handler_failure_is_readable_and_logged() -> None:
    """A crash is 'failed' with no detail; a bad return value too."""
    app = Fusion("app")

    @app.prompt()
    def broken() -> Any:
        raise RuntimeError("/secret/path")

    app.prompt("odd")(lambda: 42)
    tester = FusionTester(app)
    with pytest.raises(SurfaceError, match="prompt 'broken' failed with an internal error") as e:
        await tester.get_prompt("broken")
    assert "/secret" not in str(e.value) and e.value.kind == "failed"
    with pytest.raises(SurfaceError, match="prompt 'odd' failed with an internal error"):
        await tester.get_prompt("odd")


async def test_completion_gets_the_value_the_other_arguments_and_the_context() -> None:
    """A completer sees what was typed, the arguments chosen and the caller; 100 at most."""
    app = Fusion("app")

    @app.prompt()
    def pick(country: str, city: str) -> str:
        return city

    @pick.complete("city")
    def cities(value: str, arguments: dict[str, str], ctx: Context) -> list[str]:
        assert ctx.identity is None
        towns = {"FR": ["Paris", "Pau"], "DE": ["Berlin"]}[arguments.get("country", "DE")]
        return [town for town in towns if town.startswith(value)]

    @pick.complete("country")
    def many(value: str) -> list[str]:
        return [f"C{n}" for n in range(150)]

    tester = FusionTester(app)
    assert await tester.complete("pick", "city", "Pa", {"country": "FR"}) == ["Paris", "Pau"]
    assert await tester.complete("pick", "city", "") == ["Berlin"]
    found = await app.surface.complete("prompt", "pick", "country", "")
    assert (len(found["values"]), found["total"], found["hasMore"]) == (100, 150, True)
    assert await tester.complete("pick", "nothing", "") == []


def test_a_completer_takes_value_and_nothing_unknown() -> None:
    """A completer without value, or with another parameter, is refused."""
    app = Fusion("app")
    found = app.prompt("p")(lambda a: a)
    with pytest.raises(DefinitionError, match=r"takes value .* it takes other"):
        found.complete("a")(lambda other: [])
