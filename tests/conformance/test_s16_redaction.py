"""SPEC §16: redaction — censored data, real values for callbacks, no trace in other blocks."""

from __future__ import annotations

import json
from typing import Any

import pytest
import toon_format
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from mcpfusion import DefinitionError, Fusion, Presenter, Suggestion, require_view, ui
from mcpfusion.testing import FusionTester


class Line(BaseModel):
    """An invoice line with a cost the agent must not see."""

    sku: str
    cost: int


class Contact(BaseModel):
    """Someone's contact."""

    name: str
    email: str


class Invoice(BaseModel):
    """An invoice with personal data at several depths."""

    id: str
    ssn: str | None
    customer: Contact
    billing: Contact
    lines: list[Line]


ROW: dict[str, Any] = {
    "id": "INV-1",
    "ssn": "123-45-6789",
    "customer": {"name": "Ann", "email": "ann@example.com"},
    "billing": {"name": "Bob", "email": "bob@example.org"},
    "lines": [{"sku": "A", "cost": 12345}, {"sku": "B", "cost": 7}],
}
PATHS = ["ssn", "*.email", "lines[*].cost"]


def test_paths_name_keys_any_key_and_any_item() -> None:
    """SPEC §16: 'ssn', '*.email' and 'lines[*].cost' reach the fields they name."""
    data = require_view(Presenter("Invoice", Invoice, redact=PATHS).present(ROW)).data
    assert data == {
        "id": "INV-1",
        "ssn": "[REDACTED]",
        "customer": {"name": "Ann", "email": "[REDACTED]"},
        "billing": {"name": "Bob", "email": "[REDACTED]"},
        "lines": [{"sku": "A", "cost": "[REDACTED]"}, {"sku": "B", "cost": "[REDACTED]"}],
    }


@pytest.mark.parametrize(
    "path", ["", "a..b", "lines[0].cost", "lines[*]x", "a.[*]", "*x", "ssn[", 3]
)
def test_a_malformed_path_raises_where_it_is_written(path: Any) -> None:
    """SPEC §16: a path that is not keys, '*' and '[*]' is a definition error."""
    with pytest.raises(DefinitionError, match=r"^Presenter 'Invoice': (a )?redact path"):
        Presenter("Invoice", Invoice, redact=[path])


def test_a_path_naming_no_field_stops_the_app() -> None:
    """SPEC §16: a path whose first key the data cannot hold is refused with the catalog."""
    app = Fusion("srv")
    view = Presenter("Invoice", Invoice, redact=["social_security"])
    app.tool("billing").action("get", returns=view)(lambda: ROW)
    message = r"^Presenter 'Invoice': redact path 'social_security' names no field; the data"
    with pytest.raises(DefinitionError, match=message):
        app.freeze()


def test_callbacks_receive_the_real_values() -> None:
    """SPEC §16: every callback kind sees the values before they are censored."""
    seen: list[Any] = []
    view = Presenter("Invoice", Invoice, redact=PATHS)
    for register in (view.ui, view.rules, view.suggest, view.directives):
        register(lambda invoice: seen.append(json.dumps(invoice)))
    view.present(ROW)
    assert len(seen) == 4
    assert all("123-45-6789" in text and "ann@example.com" in text for text in seen)


@pytest.mark.parametrize("data_format", ["json", "compact", "toon"])
def test_every_block_carries_the_censor_output(data_format: Any) -> None:
    """SPEC §16: data in any format, UI, embeds, rules, directives and suggestions."""
    child = Presenter("Line", Line, redact=["cost"])
    child.collection_ui(lambda lines: ui.json(lines, title="Lines"))
    view = Presenter("Invoice", Invoice, redact=["ssn", "*.email"], data_format=data_format)
    view.embed("lines", child)
    view.ui(lambda i: ui.markdown(f"SSN {i['ssn']}, cost {i['lines'][0]['cost']}", title=i["ssn"]))
    view.rules(lambda i: f"Write to {i['customer']['email']}.")
    view.directives(lambda i: f"Never say {i['billing']['email']}.")
    view.suggest(lambda i: Suggestion("billing.remind", f"Remind {i['customer']['email']}"))
    response = view.present(ROW)
    data = response.blocks[0]
    decoded = toon_format.decode(data) if data_format == "toon" else json.loads(data)
    assert decoded["ssn"] == decoded["customer"]["email"] == "[REDACTED]"
    assert decoded["lines"][0]["cost"] == "[REDACTED]"
    text = "\n".join(response.blocks)
    for secret in ("123-45-6789", "ann@example.com", "bob@example.org", "12345"):
        assert secret not in text
    assert response.blocks[1] == (
        '<ui_passthrough type="markdown" title="[REDACTED]">\n'
        "SSN [REDACTED], cost [REDACTED]\n</ui_passthrough>"
    )
    assert "Write to [REDACTED]." in text
    assert "- billing.remind: Remind [REDACTED]" in text
    assert response.structured_content is None  # Presenters never send structured content


class Visit(BaseModel):
    """A visit whose note is free text anyone may type anything into."""

    pet: str
    owner_phone: str
    note: str
    tags: list[str]


@pytest.mark.parametrize("data_format", ["json", "compact", "toon"])
def test_a_redacted_value_in_another_field_is_censored(data_format: Any) -> None:
    """SPEC §16: a redacted value typed into another field's text is censored there too."""
    view = Presenter("Visit", Visit, redact=["owner_phone"], data_format=data_format)
    rows = [
        {"pet": "Rex", "owner_phone": "+351 912 345 678", "note": "ok", "tags": []},
        {
            "pet": "Tom",
            "owner_phone": "+351 900 000 001",
            "note": "Owner of Rex: call +351 912 345 678 first",
            "tags": ["+351 900 000 001"],
        },
    ]
    response = view.present(rows)
    assert "912 345" not in "\n".join(response.blocks)
    found = require_view(response)
    assert [row["note"] for row in found.data] == ["ok", "Owner of Rex: call [REDACTED] first"]
    assert found.data[1]["tags"] == ["[REDACTED]"]
    assert rows[1]["note"] == "Owner of Rex: call +351 912 345 678 first"  # the caller's own


def test_a_censor_function_and_none() -> None:
    """SPEC §16: a censor function decides the output; None has nothing to hide."""

    def domain_only(value: Any) -> Any:
        return "***@" + value.split("@")[1] if isinstance(value, str) else "[REDACTED]"

    view = Presenter("Invoice", Invoice, redact=PATHS, censor=domain_only)
    view.rules(lambda i: f"Mail {i['customer']['email']}")
    found = require_view(view.present({**ROW, "ssn": None}))
    assert found.data["ssn"] is None
    assert found.data["customer"]["email"] == "***@example.com"
    assert found.data["lines"][0]["cost"] == "[REDACTED]"
    assert found.system_rules == ("Mail ***@example.com",)


@pytest.mark.anyio
@pytest.mark.parametrize("censor", ["[REDACTED]", lambda value: "***" + str(value)[-2:]])
async def test_a_page_s_structured_content_carries_what_the_text_carries(censor: Any) -> None:
    """SPEC §16 with §5.4: a page's structuredContent holds no trace the data block hides."""
    view = Presenter("Visit", Visit, redact=["owner_phone"], censor=censor, limit=1)
    app = Fusion("clinic", cursor_secret="s16 paging conformance secret, 32+ bytes")
    visits = app.tool("visits", description="Visits.")

    @visits.action("list", read_only=True, returns=view, paging=True)
    def list_visits() -> list[dict[str, Any]]:
        """Every visit, paged."""
        return [
            {
                "pet": "Tom",
                "owner_phone": "+351 900 000 001",
                "note": "ring +351 900 000 001",
                "tags": ["+351 900 000 001"],
            },
            {"pet": "Rex", "owner_phone": "+351 912 345 678", "note": "ok", "tags": []},
        ]

    result = await FusionTester(app).call("visits", "list")
    assert result.structured_content is not None
    sent = json.dumps(result.structured_content, ensure_ascii=False)
    assert "900 000" not in sent and "900 000" not in "\n".join(result.response.blocks)
    assert result.structured_content["items"] == require_view(result.response).data


def test_short_values_are_not_searched() -> None:
    """SPEC §16: strings under 4 characters and numbers under 4 digits are not searched."""
    view = Presenter("Line", Line, redact=["cost", "sku"], limit=1)
    view.collection_rules(lambda lines: f"{lines[0]['sku']} costs {lines[0]['cost']}")
    rows = [{"sku": "AB", "cost": 7}, {"sku": "Hidden-row", "cost": 99999}]
    found = require_view(view.present(rows))
    assert found.system_rules == ("AB costs 7",)  # too short to search; the data is censored
    assert found.data == [{"sku": "[REDACTED]", "cost": "[REDACTED]"}]


def test_parts_added_after_the_presenter_are_searched_too() -> None:
    """SPEC §16: whatever a handler adds to a Presenter's builder is searched when built."""
    builder = Presenter("Invoice", Invoice, redact=["ssn"]).builder(ROW)
    response = builder.rule("SSN is 123-45-6789").build()
    assert require_view(response).system_rules == ("SSN is [REDACTED]",)


SECRET = st.builds(
    "Ω{}".format,
    st.text(alphabet='abcdefghij0123456789@._-"\\', min_size=3, max_size=12),
)
"""A redacted value: 4+ characters, marked by a letter no template or censor writes."""


class Person(BaseModel):
    """A row with two redacted fields and a public one."""

    id: int
    secret: str
    code: int
    note: str


people = st.lists(
    st.builds(
        lambda n, s, c, note: {"id": n, "secret": s, "code": c, "note": note},
        st.integers(0, 99),
        SECRET,
        st.integers(1000, 10**7),
        st.text(alphabet="abc ", max_size=5),
    ),
    min_size=1,
    max_size=8,
)


@given(people, st.sampled_from(["json", "compact", "toon"]))
def test_no_redacted_value_reaches_the_client(rows: list[dict[str, Any]], data_format: Any) -> None:
    """SPEC §16: whatever callbacks echo, no redacted value is in any block but as censored."""
    view = Presenter("Person", Person, redact=["secret", "code"], data_format=data_format)
    view.collection_ui(
        lambda ps: ui.table(["secret", "code"], [[p["secret"], p["code"]] for p in ps])
    )
    view.collection_ui(lambda ps: ui.json(ps, title=ps[0]["secret"]))
    view.collection_ui(lambda ps: ui.markdown(" ".join(repr(p) for p in ps)))
    view.collection_rules(lambda ps: [f"{p['secret']} has {p['code']}" for p in ps])
    view.directives(lambda ps: "Keep " + ",".join(p["secret"] for p in ps))
    view.collection_suggest(lambda ps: Suggestion("people.get", f"About {ps[-1]['secret']}"))
    response = view.present(rows)
    others = "\n".join(response.blocks[1:])
    for row in rows:
        assert row["secret"] not in others
        assert json.dumps(row["secret"])[1:-1] not in others
        assert str(row["code"]) not in others
    assert "Ω" not in response.blocks[0]
    assert all(r["secret"] == r["code"] == "[REDACTED]" for r in require_view(response).data)
