"""Operations as actions: tags, names, parameters, bodies, responses and method hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpfusion import DefinitionError
from mcpfusion._openapi.document import load_document
from mcpfusion._openapi.operations import action_name, operations, python_name, tool_name

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"


def test_the_petstore_has_nineteen_operations_under_three_tags() -> None:
    """Every operation of the petstore is found, grouped by its first tag."""
    found = operations(load_document(DATA / "petstore.yaml"))
    assert len(found) == 19
    assert sorted({op.tool for op in found}) == ["pet", "store", "user"]


def test_method_hints_follow_http_semantics() -> None:
    """GET is read-only, DELETE/PUT destructive and idempotent, POST neither."""
    found = {op.action: op for op in operations(load_document(DATA / "petstore.yaml"))}
    get, delete, post = found["getPetById"], found["deletePet"], found["addPet"]
    assert (get.read_only, get.destructive, get.idempotent) == (True, False, True)
    assert (delete.read_only, delete.destructive, delete.idempotent) == (False, True, True)
    assert (post.read_only, post.destructive, post.idempotent) == (False, False, False)


def test_bodies_and_responses_are_read_from_json_media() -> None:
    """A JSON body becomes the body parameter; the 200 JSON schema is the response."""
    found = {op.action: op for op in operations(load_document(DATA / "petstore.yaml"))}
    add = found["addPet"]
    body = next(p for p in add.parameters if p.location == "body")
    assert body.required and body.schema["required"] == ["name", "photoUrls"]
    assert add.response is not None and "photoUrls" in add.response["properties"]
    upload = found["uploadFile"]  # an octet-stream body: nothing an agent can send
    assert all(p.location != "body" for p in upload.parameters)


def test_names_are_made_valid_for_mcp_and_python() -> None:
    """Tags, missing operationIds and parameter names become valid names."""
    assert tool_name("Fine-tuning") == "fine-tuning"
    assert tool_name("User Accounts") == "user_accounts"
    assert action_name(None, "get", "/api/v1/pets/{id}") == "get_api_v1_pets_id"
    assert action_name("list pets!", "get", "/") == "list_pets"
    taken: set[str] = set()
    assert [python_name(n, taken) for n in ("api-key", "class", "api_key", "1x")] == [
        "api_key",
        "p_class",
        "api_key_",
        "p_1x",
    ]


def test_duplicate_action_names_in_a_tag_fail_loudly() -> None:
    """Two operations of one tag with one operationId are a definition error."""
    document = {
        "openapi": "3.0.0",
        "paths": {
            "/a": {"get": {"operationId": "same", "tags": ["t"], "responses": {}}},
            "/b": {"get": {"operationId": "same", "tags": ["t"], "responses": {}}},
        },
    }
    with pytest.raises(DefinitionError, match="both named 'same'"):
        operations(document)
