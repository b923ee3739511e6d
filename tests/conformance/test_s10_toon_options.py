"""SPEC §3, §10: the data format per app, TOON delimiters, groups in TOON, TOON and forgery."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import toon_format
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from mcpfusion import Fusion, Presenter, toon_success
from mcpfusion._wire.format import RESERVED_TAGS
from mcpfusion.testing import FusionTester
from tests.conformance.test_properties import Case, _assert_tag_counts, _emitted, cases


class Row(BaseModel):
    """A flat row."""

    id: int
    name: str


ROWS = [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bo, b"}]


@pytest.mark.parametrize(
    ("delimiter", "text"),
    [
        ("|", "[2|]{id|name}:\n  1|Ada\n  2|Bo, b"),
        (",", '[2]{id,name}:\n  1,Ada\n  2,"Bo, b"'),
        ("\t", "[2\t]{id\tname}:\n  1\tAda\n  2\tBo, b"),
    ],
)
def test_toon_delimiters(delimiter: Any, text: str) -> None:
    """SPEC §10: toon_success and the TOON data format take '|', ',' or a tab."""
    assert toon_success(ROWS, delimiter=delimiter).blocks[0] == text
    view = Presenter("Row", Row, data_format="toon", delimiter=delimiter)
    assert view.present(ROWS).blocks[0] == text
    assert toon_format.decode(text) == ROWS


def test_the_app_chooses_for_presenters_and_plain_values() -> None:
    """SPEC §3: the app's format applies where a Presenter chooses none, and to plain values."""
    app = Fusion("srv", data_format="toon", delimiter=",")
    tool = app.tool("t")
    tool.action("presented", returns=Presenter("Row", Row))(lambda: ROWS)
    tool.action("own", returns=Presenter("Row", Row, data_format="compact"))(lambda: ROWS)
    tool.action("plain")(lambda: {"id": 3})
    tester = FusionTester(app)
    assert tester.call_sync("t", "presented").text == '[2]{id,name}:\n  1,Ada\n  2,"Bo, b"'
    assert tester.call_sync("t", "own").text == '[{"id":1,"name":"Ada"},{"id":2,"name":"Bo, b"}]'
    assert tester.call_sync("t", "plain").text == "id: 3"


def test_groups_follow_the_toon_action_table() -> None:
    """SPEC §10: a tool with groups adds a second table, groups[N|]{group|desc}."""
    app = Fusion("srv")
    tool = app.tool("issues", description="Issues.").toon_description()
    tool.action("find", read_only=True)(lambda: None)
    tool.group("admin", description="Maintenance.").action("purge", destructive=True)(lambda: None)
    assert app.list_tools()[0]["description"] == (
        'Issues.\n\n[2|]{action|desc|required}:\n  find|""|""\n'
        '  admin.purge|"[DESTRUCTIVE]"|""\n\ngroups[1|]{group|desc}:\n  admin|Maintenance.'
    )


@given(cases(), st.sampled_from(["|", ",", "\t"]), st.sampled_from(["", "\n", "\n\n"]))
def test_no_reserved_tag_is_forged_in_toon(case: Case, delimiter: Any, separator: str) -> None:
    """SPEC §7, §10: the TOON format passes the forgery property of the other formats."""
    toon = replace(case, data_format="toon")
    built = toon.build()
    if delimiter != "|":
        built = toon_success(toon.data, delimiter=delimiter)
        _assert_tag_counts(built.blocks[0], dict.fromkeys(RESERVED_TAGS, 0))
        return
    _assert_tag_counts(separator.join(built.blocks), _emitted(toon, built))
