"""from_openapi's app: tools, argument names and types, hints, and its options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpfusion import DefinitionError
from mcpfusion.openapi import from_openapi

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"


def tools(**options: Any) -> dict[str, dict[str, Any]]:
    """The petstore app's tools/list entries by name."""
    app = from_openapi(DATA / "petstore.yaml", **options)
    return {tool["name"]: tool for tool in app.list_tools()}


def test_a_name_used_with_two_types_is_renamed_for_the_later_action() -> None:
    """status is an enum in findPetsByStatus and free text in updatePetWithForm."""
    pet = tools()["pet"]["inputSchema"]["properties"]
    assert pet["status"]["enum"] == ["available", "pending", "sold"]
    assert pet["updatePetWithForm_status"]["type"] == "string"


def test_read_only_request_fields_and_write_only_response_fields_are_dropped() -> None:
    """A body schema loses readOnly properties; the document's own schema is advertised."""
    document = {
        "openapi": "3.1.0",
        "servers": [{"url": "https://api.test"}],
        "paths": {
            "/things": {
                "post": {
                    "operationId": "create",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string", "readOnly": True},
                                        "name": {"type": "string"},
                                    },
                                }
                            }
                        }
                    },
                    "responses": {},
                }
            }
        },
    }
    [tool] = from_openapi(document).list_tools()
    assert tool["name"] == "api"
    assert list(tool["inputSchema"]["properties"]["body"]["properties"]) == ["name"]


def test_flat_exposition_lists_one_tool_per_operation() -> None:
    """exposition="flat" names each tool {tag}_{operationId} with its own hints."""
    flat = tools(exposition="flat")
    assert len(flat) == 19
    assert flat["pet_getPetById"]["annotations"]["readOnlyHint"] is True
    # Lean definitions (the default) leave out hints equal to MCP's defaults, under which
    # a tool that is not read-only is destructive.
    deleting = flat["pet_deletePet"].get("annotations", {})
    assert deleting.get("readOnlyHint", False) is False
    assert deleting.get("destructiveHint", True) is True


def test_a_document_without_an_absolute_server_needs_base_url() -> None:
    """A relative or templated server URL cannot be called: base_url is asked for."""
    document = {"openapi": "3.0.0", "servers": [{"url": "{scheme}://x"}], "paths": {}}
    with pytest.raises(DefinitionError, match="pass base_url"):
        from_openapi(document)
    assert from_openapi(document, base_url="http://api.test").name == "openapi"
