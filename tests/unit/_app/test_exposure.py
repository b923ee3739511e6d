"""Progressive exposure: the catalog tool, each caller's list, and what a call lists."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpfusion import DefinitionError, Fusion, Identity
from mcpfusion._app.exposure import CATALOG_TOOL, FOUND_LIMIT, NAMES_LIMIT, Progressive
from mcpfusion._tools.caller_state import MemoryCallerStore, caller_state_of
from mcpfusion.testing import FusionTester

pytestmark = pytest.mark.anyio

ALICE = Identity("alice", tenant="acme", scopes={"fleet:read"})
BOB = Identity("bob", tenant="acme", scopes={"fleet:read"})
GUEST = Identity("guest", tenant="acme")


def fleet(*, always: tuple[str, ...] = ("depots",)) -> Fusion:
    """A progressive app: depots, four tools counting things, one needing a scope."""
    app = Fusion("fleet", exposure="progressive", always_listed=always)
    depots = app.tool("depots", description="Depots: find one by city.")

    @depots.action(read_only=True)
    def find(city: str) -> str:
        """The depot of a city."""
        return f"depot-{city}"

    for kind in ("trucks", "drivers", "routes"):
        counted(app, kind, description=f"{kind.capitalize()} of a depot.")
    counted(app, "audits", description="Fleet audits of a depot.", requires=["fleet:read"])
    return app


def counted(app: Fusion, kind: str, description: str, requires: list[str] | None = None) -> None:
    """Defines the tool ``kind`` with one action counting them."""
    tool = app.tool(kind, description=description, requires=requires or ())

    @tool.action(read_only=True)
    def count(depot: str) -> str:
        """How many a depot has."""
        return f"{depot}: 3 {kind}"


def names(tools: list[dict[str, Any]]) -> list[str]:
    """The names of listed tool definitions."""
    return [tool["name"] for tool in tools]


def told_of(app: Fusion) -> list[tuple[str | None, str]]:
    """Records what ``app`` announces (the server sends list_changed for each)."""
    told: list[tuple[str | None, str]] = []

    async def announcer(tenant: str | None, listed: str) -> None:
        told.append((tenant, listed))

    app.announce_changes(announcer)
    return told


def test_exposure_is_all_or_progressive() -> None:
    """Another exposure fails when the app is defined."""
    with pytest.raises(DefinitionError, match="exposure must be one of"):
        Fusion("x", exposure="some")  # type: ignore[arg-type]


def test_always_listed_needs_progressive_exposure() -> None:
    """always_listed on an app listing everything is a mistake, said at once."""
    with pytest.raises(DefinitionError, match="always_listed needs exposure='progressive'"):
        Fusion("x", always_listed=["a"])


def test_always_listed_is_a_collection_of_names() -> None:
    """A bare str would be read as one name per character: refused."""
    with pytest.raises(DefinitionError, match="collection of tool names"):
        Fusion("x", exposure="progressive", always_listed="depots")


def test_always_listed_names_a_listed_tool() -> None:
    """A name no tool lists fails when the catalog is built, naming the listed ones."""
    app = fleet(always=("depot",))
    with pytest.raises(DefinitionError, match=r"always_listed names 'depot'.*listed: audits"):
        app.freeze()


def test_the_catalog_tool_name_is_taken() -> None:
    """A tool of the app named like the catalog tool fails at its definition."""
    app = Fusion("x", exposure="progressive")
    with pytest.raises(DefinitionError, match=f"already has a tool '{CATALOG_TOOL}'"):
        app.tool(CATALOG_TOOL)


async def test_a_caller_first_sees_the_catalog_and_the_always_listed() -> None:
    """tools/list starts with the catalog tool and the always-listed tools only."""
    assert names(await fleet().list_tools_for(ALICE)) == [CATALOG_TOOL, "depots"]


async def test_browse_lists_every_visible_tool_in_one_table() -> None:
    """browse names each tool the caller may see with its first line, as a TOON table."""
    result = await FusionTester(fleet(), identity=GUEST).call(CATALOG_TOOL, "browse")
    assert result.text == (
        "[4|]{name|summary}:\n"
        '  depots|"Depots: find one by city."\n'
        "  trucks|Trucks of a depot.\n"
        "  drivers|Drivers of a depot.\n"
        "  routes|Routes of a depot."
    )


async def test_search_sends_the_definitions_matching_most_words() -> None:
    """search ranks by the words matched, a name's words counting twice, and caps the count."""
    tester = FusionTester(fleet(), identity=ALICE)
    result = await tester.call(CATALOG_TOOL, "search", words="fleet audits", limit=1)
    assert result.data == [
        {
            "name": "audits",
            "description": "Fleet audits of a depot.\n\nActions:\n- count: How many a "
            "depot has. Requires: depot.",
            "input_schema": {
                "type": "object",
                "properties": {"action": {"enum": ["count"]}, "depot": {"type": "string"}},
                "required": ["action", "depot"],
                "additionalProperties": False,
            },
        }
    ]
    assert "<domain_rules>" in result.text
    many = await tester.call(CATALOG_TOOL, "search", words="depot", limit=FOUND_LIMIT + 5)
    assert [d["name"] for d in many.data] == ["depots", "trucks", "drivers", "routes", "audits"]


async def test_search_ignores_words_of_one_or_two_letters() -> None:
    """Short words match nearly everything, so they rank nothing."""
    tester = FusionTester(fleet(), identity=GUEST)
    found = await tester.call(CATALOG_TOOL, "search", words="to a of trucks", limit=5)
    assert [d["name"] for d in found.data] == ["trucks"]
    assert (await tester.call(CATALOG_TOOL, "search", words="a of")).data == []


async def test_search_finds_nothing_the_caller_may_not_see() -> None:
    """A caller without the scope never reads the definition it could not call."""
    result = await FusionTester(fleet(), identity=GUEST).call(
        CATALOG_TOOL, "search", words="audits"
    )
    assert result.data == []


async def test_use_lists_tools_for_that_caller_and_announces_once() -> None:
    """use lists the tools for its caller only, and tells the server once."""
    app = fleet()
    told = told_of(app)
    tester = FusionTester(app, identity=ALICE)
    result = await tester.call(CATALOG_TOOL, "use", names=["trucks", "drivers"])
    assert (result.is_error, result.text) == (False, "Listed: trucks, drivers.")
    await tester.call(CATALOG_TOOL, "use", names=["trucks"])
    assert told == [("acme", "tools")]
    assert names(await app.list_tools_for(ALICE)) == [CATALOG_TOOL, "depots", "trucks", "drivers"]
    assert names(await app.list_tools_for(BOB)) == [CATALOG_TOOL, "depots"]


async def test_use_of_an_unknown_name_says_where_names_are() -> None:
    """A name no visible tool has is UNKNOWN_TOOL, pointing at browse and search."""
    app = fleet()
    result = await FusionTester(app, identity=GUEST).call(
        CATALOG_TOOL, "use", names=["trucks", "audits"]
    )
    assert result.is_error and 'code="UNKNOWN_TOOL"' in result.text
    assert "No tool named 'audits'." in result.text and "browse or search" in result.text
    assert names(await app.list_tools_for(GUEST)) == [CATALOG_TOOL, "depots"]


async def test_calling_an_unlisted_tool_answers_and_lists_it() -> None:
    """A tool called before it is listed answers, and is listed from then on."""
    app = fleet()
    told = told_of(app)
    result = await FusionTester(app, identity=ALICE).call("routes", "count", depot="d-1")
    assert (result.is_error, result.text) == (False, "d-1: 3 routes")
    assert told == [("acme", "tools")]
    assert names(await app.list_tools_for(ALICE)) == [CATALOG_TOOL, "depots", "routes"]


async def test_calling_an_always_listed_tool_announces_nothing() -> None:
    """Only a change of the caller's list is announced."""
    app = fleet()
    told = told_of(app)
    await FusionTester(app, identity=ALICE).call("depots", "find", city="Oslo")
    await FusionTester(app, identity=ALICE).call(CATALOG_TOOL, "browse")
    assert told == []


async def test_exposure_grants_nothing() -> None:
    """A caller without the scope is refused a tool it called, and it stays unlisted."""
    app = fleet()
    result = await FusionTester(app, identity=GUEST).call("audits", "count", depot="d-1")
    assert result.is_error and 'code="FORBIDDEN"' in result.text
    assert names(await app.list_tools_for(GUEST)) == [CATALOG_TOOL, "depots"]


async def test_a_stored_value_that_is_no_list_of_names_is_none() -> None:
    """Exposure read back from the caller store is data: garbage exposes nothing."""
    app = fleet()
    exposure = app.exposure
    assert isinstance(exposure, Progressive)
    app._bind_caller_store()
    await caller_state_of(ALICE, {})._put("mcpfusion.exposed", {"trucks": 1}, 60)
    assert await exposure.exposed(ALICE, {}) == set()
    await caller_state_of(ALICE, {})._put("mcpfusion.exposed", ["trucks", 3], 60)
    assert await exposure.exposed(ALICE, {}) == {"trucks"}


async def test_use_takes_a_bounded_list_of_bounded_names() -> None:
    """No names, too many names or a name too long is a validation error, not echoed whole."""
    tester = FusionTester(fleet(), identity=ALICE)
    empty = await tester.call(CATALOG_TOOL, "use", names=[])
    assert empty.error_code == "VALIDATION_ERROR" and "at least 1 item" in empty.text
    many = await tester.call(CATALOG_TOOL, "use", names=["trucks"] * (NAMES_LIMIT + 1))
    assert many.error_code == "VALIDATION_ERROR" and f"at most {NAMES_LIMIT} items" in many.text
    long = await tester.call(CATALOG_TOOL, "use", names=["x" * 5000])
    assert long.error_code == "VALIDATION_ERROR" and "x" * 5000 not in long.text


class FailingStore(MemoryCallerStore):
    """A memory store whose writes fail, as a store that went down mid-call."""

    async def put(self, caller: str, name: str, value: str, ttl: float) -> None:
        """Fails."""
        raise OSError("the store is down")


async def test_a_call_is_answered_when_listing_its_tool_cannot_be_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The handler's answer is sent, the failure logged, and the tool stays unlisted."""
    app = fleet()
    app._caller_store = FailingStore()
    told = told_of(app)
    with caplog.at_level(logging.WARNING, logger="mcpfusion"):
        result = await FusionTester(app, identity=ALICE).call("routes", "count", depot="d-1")
    assert (result.is_error, result.text) == (False, "d-1: 3 routes")
    assert "listing 'routes' for its caller failed" in caplog.text
    assert told == []
    assert names(await app.list_tools_for(ALICE)) == [CATALOG_TOOL, "depots"]
