"""An OpenAPI service as presented MCP tools (YAML documents need ``mcpfusion[openapi]``).

from mcpfusion.openapi import Bearer, from_openapi

app = from_openapi("petstore.yaml", base_url="https://petstore3.swagger.io/api/v3",
                   auth=Bearer(os.environ["PETSTORE_TOKEN"]))
app.run()

Each tag becomes a grouped tool, each operation an action (named by its operationId);
arguments are validated with the document's schemas, responses go through Presenters whose
whitelist is the response schema. ``mcpfusion openapi SPEC --inspect`` shows what agents
see; see docs/openapi.md.
"""

from mcpfusion._openapi.auth import ApiKey, Bearer
from mcpfusion._openapi.build import from_openapi
from mcpfusion._openapi.document import load_document

__all__ = ["ApiKey", "Bearer", "from_openapi", "load_document"]
