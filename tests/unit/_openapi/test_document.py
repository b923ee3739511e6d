"""Reading OpenAPI documents: files, references and the 3.0 keywords JSON Schema lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpfusion import DefinitionError
from mcpfusion._openapi.document import MAX_DEPTH, json_schema, load_document, resolve

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"


def test_yaml_and_dict_documents_load() -> None:
    """A YAML file and a dict both load as the same kind of mapping."""
    document = load_document(DATA / "petstore.yaml")
    assert document["info"]["title"] == "Swagger Petstore - OpenAPI 3.0"
    assert load_document(document)["paths"].keys() == document["paths"].keys()


def test_swagger_2_is_refused_with_the_way_out() -> None:
    """A Swagger 2.0 document fails at definition time, saying how to convert it."""
    with pytest.raises(DefinitionError, match="swagger2openapi"):
        load_document({"swagger": "2.0", "paths": {}})


def test_a_missing_file_is_a_definition_error(tmp_path: Path) -> None:
    """An unreadable document names its path."""
    with pytest.raises(DefinitionError, match="cannot read the OpenAPI document"):
        load_document(tmp_path / "absent.yaml")


def test_references_are_inlined_and_recursion_is_cut() -> None:
    """Local references resolve; a schema that contains itself stops at MAX_DEPTH."""
    document = {
        "components": {
            "schemas": {
                "Node": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/components/schemas/Node"}},
                }
            }
        }
    }
    node = resolve(document, {"$ref": "#/components/schemas/Node"})
    for _ in range(MAX_DEPTH - 1):
        node = node["properties"]["next"]
    assert node["properties"]["next"] == {}


def test_a_dangling_reference_fails_loudly() -> None:
    """A reference to nothing is a definition error naming it."""
    with pytest.raises(DefinitionError, match="points to nothing"):
        resolve({"components": {}}, {"$ref": "#/components/schemas/Gone"})


def test_read_only_and_write_only_fields_travel_one_way() -> None:
    """readOnly fields leave requests, writeOnly fields leave responses, required follows."""
    schema = {
        "type": "object",
        "required": ["id", "password", "name"],
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "password": {"type": "string", "writeOnly": True},
            "name": {"type": "string", "example": "Rex", "x-internal": 1},
        },
    }
    request = json_schema(schema, "request")
    response = json_schema(schema, "response")
    assert list(request["properties"]) == ["password", "name"]
    assert request["required"] == ["password", "name"]
    assert list(response["properties"]) == ["id", "name"]
    assert response["properties"]["name"] == {"type": "string"}


def test_nullable_and_boolean_exclusive_bounds_become_json_schema() -> None:
    """3.0's nullable adds null; exclusiveMinimum: true becomes the 2020-12 number form."""
    converted = json_schema(
        {"type": "integer", "nullable": True, "minimum": 0, "exclusiveMinimum": True}, "request"
    )
    assert converted == {"type": ["integer", "null"], "exclusiveMinimum": 0}
