"""The two-clinic server of ``benchmarks.six_calls`` as a new FastMCP user writes it.

Run in ``.venv-fastmcp``: ``python -m tests.integrations.fastmcp_suite.clinic_server PORT``
serves streamable HTTP on 127.0.0.1:PORT at ``/mcp``.
"""

from __future__ import annotations

import sys
from typing import Any

from fastmcp import FastMCP

from benchmarks.clinic import data

mcp = FastMCP("clinic")


@mcp.tool(description=data.DESCRIPTIONS["list_pets"])
def list_pets(clinic: str) -> list[dict[str, Any]]:
    return [pet for pet in data.pets() if pet["clinic"] == clinic]


@mcp.tool(description=data.DESCRIPTIONS["get_pet"])
def get_pet(pet_id: str) -> dict[str, Any]:
    found = data.pet(pet_id)
    if found is None:
        raise ValueError(f"No pet {pet_id}.")
    return found


@mcp.tool(description=data.DESCRIPTIONS["list_appointments"])
def list_appointments(clinic: str, day: str) -> list[dict[str, Any]]:
    return data.appointments(clinic, day)


@mcp.tool(description=data.DESCRIPTIONS["book_visit"])
def book_visit(pet_id: str, day: str) -> str:
    return f"Booked {pet_id} on {day} at 09:00."


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
