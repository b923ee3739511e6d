"""A progressive app for the e2e tests: six tools behind the catalog tool, one always listed."""

from __future__ import annotations

from mcpfusion import Fusion

app = Fusion("depots", exposure="progressive", always_listed=["depots"])
depots = app.tool("depots", description="Depots: find one by city.")


@depots.action(read_only=True)
def find(city: str) -> str:
    """The depot of a city."""
    return f"depot-{city.lower()}"


def counted(kind: str) -> None:
    """Defines the tool ``kind`` with one action counting them in a depot."""
    tool = app.tool(kind, description=f"{kind.capitalize()} of a depot.")

    @tool.action(read_only=True)
    def count(depot: str) -> str:
        """How many a depot has."""
        return f"{depot}: 3 {kind}"


for kind in ("trucks", "drivers", "routes", "parcels", "invoices"):
    counted(kind)
