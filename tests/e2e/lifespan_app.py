"""An app whose lifespan records its start and stop in a file, for the signal tests."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from mcpfusion import Context, Fusion

LOG = Path(os.environ.get("LIFESPAN_LOG", os.devnull))


def _note(event: str) -> None:
    with LOG.open("a") as log:
        log.write(f"{event} {os.getpid()}\n")


START_SECONDS = float(os.environ.get("LIFESPAN_START_SECONDS", "0"))
"""How long the lifespan takes to start after recording it (a test's signal lands there)."""


@asynccontextmanager
async def lifespan(app: Fusion) -> AsyncIterator[dict[str, int]]:
    """Records start and stop around serving."""
    _note("start")
    try:
        await anyio.sleep(START_SECONDS)
        yield {"calls": 0}
    finally:
        _note("stop")


app = Fusion(
    "lifespan", data_format="json", ui_audience="all", definitions="full", lifespan=lifespan
)


@app.tool("ops", exposition="flat").action
async def ping(ctx: Context) -> str:
    """Answers pong, counting calls in the state."""
    ctx.state["calls"] += 1
    return "pong"
