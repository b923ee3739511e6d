"""An app with more tools, resources, templates and prompts than one page of its lists holds."""

from __future__ import annotations

from mcpfusion import Fusion, Identity

app = Fusion(
    "paged",
    version="1.0.0",
    data_format="json",
    local_identity=Identity("operator", scopes={"read"}),
)

for number in range(1, 6):
    app.tool(f"tool_{number}", description=f"Tool {number}.").action("get", read_only=True)(
        lambda: "ok"
    )
# Listed only to callers holding "admin": never on a page of anyone else's list.
app.tool("admin", description="Admin only.", requires={"admin"}).action("purge")(lambda: "ok")

for number in range(1, 4):
    app.resource(f"paged://fixed/{number}", name=f"fixed_{number}", mime_type="text/plain")(
        lambda: "fixed"
    )
    app.resource(f"paged://rows/{number}/{{row_id}}", name=f"rows_{number}")(lambda row_id: row_id)
    app.prompt(name=f"prompt_{number}", description=f"Prompt {number}.")(lambda: "Hello.")
