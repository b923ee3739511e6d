"""The app of the tasks-across-workers tests: its actions say which process ran them."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from mcpfusion import Context, Fusion

app = Fusion("tasks", version="1.0.0")
jobs = app.tool("jobs", description="Work run as tasks by queue workers.")


@jobs.action("whoami", read_only=True, task="always")
async def whoami(ctx: Context) -> str:
    """The worker process and the caller it ran as."""
    subject = ctx.identity.subject if ctx.identity else "anonymous"
    return f"pid={os.getpid()} subject={subject}"


@jobs.action("hold", read_only=True, timeout=300, task="always")
async def hold(ctx: Context, marker: str, seconds: float = 120.0) -> str:
    """Reports its pid, then waits; a second run returns at once; a cancel is written down.

    ``marker`` is a file: ``started`` once a run began, ``cancelled`` once one was
    cancelled, so the test sees the handler itself stop.
    """
    path = Path(marker)
    if path.exists():
        return f"pid={os.getpid()} ran again"
    path.write_text("started")
    await ctx.progress(0, None, f"pid={os.getpid()}")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        path.write_text("cancelled")
        raise
    return f"pid={os.getpid()} held {seconds}s"


@jobs.action("begun", read_only=True, task="always", task_begins="handler")
async def begun(ctx: Context) -> str:
    """Becomes a task from inside its handler, then says which process went on with it."""
    await ctx.continue_as_task()
    return f"pid={os.getpid()} begun in the handler"
