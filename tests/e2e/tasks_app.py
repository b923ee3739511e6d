"""An app with task actions, served by the tasks e2e tests over stdio and HTTP."""

from __future__ import annotations

import anyio

from mcpfusion import Context, Fusion

app = Fusion("tasks-e2e")
jobs = app.tool("jobs", description="Background jobs.")


@jobs.action(read_only=True, task="optional")
async def crunch(ctx: Context, rounds: int = 3) -> str:
    """Crunches a few rounds, reporting each; a task when the client can."""
    for done in range(rounds):
        await ctx.progress(done, rounds, f"round {done + 1} of {rounds}")
        await anyio.sleep(0.01)
    await ctx.log("info", "crunching finished")
    return f"crunched {rounds} rounds"


@jobs.action(read_only=True, task="always")
async def long(ctx: Context) -> str:
    """Runs about ten seconds, reporting every tenth of one, unless cancelled."""
    for tenth in range(100):
        await ctx.progress(tenth, 100, f"step {tenth + 1} of 100")
        await anyio.sleep(0.1)
    return "finished"
