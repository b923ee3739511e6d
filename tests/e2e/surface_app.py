"""An app whose handlers talk to the client: logs at every level, a question, sampling."""

from __future__ import annotations

from pydantic import BaseModel

from mcpfusion import Context, Fusion


class Why(BaseModel):
    """What the user is asked."""

    reason: str


app = Fusion("surface", data_format="json", ui_audience="all", definitions="full", version="1.0.0")
talk = app.tool("talk", description="Talks to the client.")


@talk.action
async def chat(ctx: Context) -> str:
    """Logs twice, asks the user why, and asks the client's model to say hi."""
    await ctx.log("debug", "debug line")
    await ctx.log("warning", "warning line", {"n": 1})
    answer = await ctx.elicit("Why?", Why)
    said = answer.data.reason if answer.accepted else answer.action
    reply = await ctx.sample("Say hi.", max_tokens=5)
    return f"{said}/{reply.text}"


@talk.action(read_only=True)
async def hello(ctx: Context) -> str:
    """Logs once at info."""
    await ctx.log("info", "hello line")
    return "hello"
