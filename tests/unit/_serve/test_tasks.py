"""MCP tasks (SEP-2663) on the served app: raw 2026-07-28 requests over the ASGI app.

Raw JSON-RPC, so each request says exactly which caller sends it (its bearer key) and
what it declares (the tasks extension or not); the server is stateless and answers JSON.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcpfusion import Context, Fusion, Identity
from mcpfusion._serve.sdk import build_server
from mcpfusion.auth import APIKeyVerifier, Auth, hash_api_key
from mcpfusion.testing import HttpTester

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/tasks"
ALICE, BOB = "alice-key-0123456789abcdef", "bob-key-0123456789abcdef"


class Confirmation(BaseModel):
    """Yes or no."""

    confirm: bool


class Name(BaseModel):
    """A name."""

    name: str


class Probe:
    """What the handlers saw: whether the long one was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.seen: list[tuple[str, str, bool]] = []
        self.threads: list[str] = []


def tasks_app(probe: Probe) -> Fusion:
    """An app with a quick task, a long one, a questioning one and a plain action."""
    app = Fusion("tasks")
    jobs = app.tool("jobs", description="Jobs.")

    @app.middleware
    async def record(call: Any, call_next: Any) -> Any:
        probe.seen.append((call.action, call.identity.subject, call.rejected))
        return await call_next(call)

    @jobs.action(read_only=True, task="optional")
    async def quick(ctx: Context) -> str:
        """Logs, reports progress and answers."""
        await ctx.log("info", "warming up")
        await ctx.progress(1, 2, "half way")
        return "quick done"

    @jobs.action(read_only=True, task="always")
    async def long() -> str:
        """Runs until cancelled."""
        probe.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            probe.cancelled.set()
        return "never"

    @jobs.action(destructive=True, task="optional")
    async def wipe(ctx: Context) -> str:
        """Asks first."""
        answer = await ctx.elicit("Wipe everything?", Confirmation)
        return "wiped" if answer.accepted and answer.data.confirm else "kept"

    @jobs.action(read_only=True, task="always", task_begins="handler")
    async def onboard(ctx: Context) -> str:
        """Asks a name in the call's rounds, then goes on as a task."""
        answer = await ctx.elicit("Your name?", Name, key="who")
        await ctx.continue_as_task()
        return f"welcome {answer.data.name if answer.accepted else '?'}"

    @jobs.action(read_only=True, task="optional", requires=["jobs:admin"])
    def purge() -> str:
        """Needs a scope no caller holds."""
        return "purged"

    @jobs.action(read_only=True)
    def plain() -> str:
        """Never a task."""
        return "plain"

    @jobs.action(read_only=True, task="optional")
    def tally() -> str:
        """A sync handler as a task: it runs in a worker thread."""
        probe.threads.append(threading.current_thread().name)
        return "tallied"

    return app


def auth() -> Auth:
    """Two callers of one tenant, by API key."""
    keys = {
        hash_api_key(ALICE): Identity("alice", tenant="acme"),
        hash_api_key(BOB): Identity("bob", tenant="acme"),
    }
    return Auth(
        verifier=APIKeyVerifier(keys),
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://id.example.com"],
    )


class Raw:
    """Sends 2026-07-28 requests as a given caller, declaring the extension or not."""

    def __init__(self, tester: HttpTester) -> None:
        self.tester = tester

    async def send(
        self,
        method: str,
        params: dict[str, Any],
        *,
        key: str = ALICE,
        tasks: bool = True,
        name: str | None = None,
    ) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"elicitation": {}}
        if tasks:
            capabilities["extensions"] = {EXTENSION: {}}
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }
        headers = {
            "Authorization": f"Bearer {key}",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
            "Accept": "application/json, text/event-stream",
        }
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        if name is not None:
            headers["Mcp-Name"] = name
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
        response = await self.tester.http.post(self.tester.session.path, json=body, headers=headers)
        answer: dict[str, Any] = response.json()
        self.status = response.status_code
        return answer

    async def call(self, action: str, **kwargs: Any) -> dict[str, Any]:
        """The result of a ``jobs`` call."""
        args = {"name": "jobs", "arguments": {"action": action}}
        answer = await self.send("tools/call", args, **kwargs)
        result: dict[str, Any] = answer["result"]
        return result

    async def get(self, task_id: str, **kwargs: Any) -> dict[str, Any]:
        """The ``tasks/get`` answer (result or error)."""
        return await self.send("tasks/get", {"taskId": task_id}, **kwargs)

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """Polls until the task reaches one of ``statuses``."""
        while True:
            task: dict[str, Any] = (await self.get(task_id))["result"]
            if task["status"] in statuses:
                return task
            await anyio.sleep(0.02)  # polling, as a client does; bounded by the caller


@pytest.fixture
def probe() -> Probe:
    """A fresh probe."""
    return Probe()


@pytest.fixture
async def raw(probe: Probe) -> AsyncIterator[Raw]:
    """The tasks app served stateless with JSON bodies, two callers allowed."""
    headers = {"Authorization": f"Bearer {ALICE}"}  # the tester's own client, as Alice
    served = HttpTester(
        tasks_app(probe), headers=headers, stateless=True, json_response=True, auth=auth()
    )
    async with served as tester:
        yield Raw(tester)


async def test_a_task_completes_with_its_result_inlined(raw: Raw) -> None:
    """A task action answers a CreateTaskResult; tasks/get then inlines the tool's result."""
    with anyio.fail_after(30):
        created = await raw.call("quick")
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
        assert not {"result", "error", "inputRequests", "task"} & set(created)
        done = await raw.until(created["taskId"], "completed", "failed")
    assert done["status"] == "completed"
    assert done["resultType"] == "complete"
    assert "quick done" in done["result"]["content"][0]["text"]
    assert done["statusMessage"] == "half way"


async def test_a_sync_task_completes_while_its_client_polls_without_waiting(
    raw: Raw, probe: Probe
) -> None:
    """A sync handler's task completes although the client keeps the loop busy polling."""
    polls = 0
    with anyio.fail_after(30):
        task = await raw.call("tally")
        while task["status"] == "working":
            await anyio.sleep(0)  # no poll interval: the loop never waits on a socket
            task = (await raw.get(task["taskId"]))["result"]
            polls += 1
    assert task["status"] == "completed" and polls >= 1
    assert task["result"]["content"][0]["text"] == "tallied"
    assert [name.startswith("mcpfusion-handler") for name in probe.threads] == [True]


async def test_a_plain_action_never_makes_a_task(raw: Raw) -> None:
    """An action without task= answers in its own request, extension or not."""
    with anyio.fail_after(30):
        result = await raw.call("plain")
    assert result["resultType"] == "complete"
    assert "taskId" not in result


async def test_without_the_extension_optional_runs_inline_and_always_is_refused(
    raw: Raw,
) -> None:
    """A client without the extension gets optional actions inline, and -32021 for always."""
    with anyio.fail_after(30):
        inline = await raw.call("quick", tasks=False)
        refused = await raw.send(
            "tools/call", {"name": "jobs", "arguments": {"action": "long"}}, tasks=False
        )
        gated = await raw.get("whatever", tasks=False)
    assert inline["resultType"] == "complete"
    assert "quick done" in inline["content"][0]["text"]
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    assert gated["error"]["code"] == -32021


async def test_another_callers_task_is_not_found(raw: Raw) -> None:
    """Bob reading, cancelling or answering Alice's task gets -32602, as for an unknown id."""
    with anyio.fail_after(30):
        task_id = (await raw.call("quick"))["taskId"]
        await raw.until(task_id, "completed")
        answers = [
            await raw.get(task_id, key=BOB),
            await raw.send("tasks/cancel", {"taskId": task_id}, key=BOB),
            await raw.send("tasks/update", {"taskId": task_id, "inputResponses": {}}, key=BOB),
            await raw.get("no-such-task"),
        ]
        mine = await raw.get(task_id)
    assert [answer["error"]["code"] for answer in answers] == [-32602] * 4
    assert all("result" not in answer for answer in answers)
    assert mine["result"]["status"] == "completed"


async def test_cancel_stops_the_handler_and_settles_cancelled(raw: Raw, probe: Probe) -> None:
    """tasks/cancel acks empty, the handler's scope is cancelled, the task stays cancelled."""
    with anyio.fail_after(30):
        task_id = (await raw.call("long"))["taskId"]
        await probe.started.wait()
        ack = await raw.send("tasks/cancel", {"taskId": task_id})
        await probe.cancelled.wait()
        task = (await raw.get(task_id))["result"]
        again = await raw.send("tasks/cancel", {"taskId": task_id})
    assert ack["result"]["resultType"] == "complete"
    assert not {"taskId", "status"} & set(ack["result"])
    assert task["status"] == "cancelled"
    assert "result" not in task
    assert again["result"]["resultType"] == "complete"


async def test_a_question_waits_in_the_task_until_updated(raw: Raw) -> None:
    """A handler's question makes the task input_required; tasks/update resumes it."""
    with anyio.fail_after(30):
        task_id = (await raw.call("wipe"))["taskId"]
        asked = await raw.until(task_id, "input_required")
        (key, request), *_ = asked["inputRequests"].items()
        answer = {"action": "accept", "content": {"confirm": True}}
        ack = await raw.send("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
        done = await raw.until(task_id, "completed", "failed")
    assert request["method"] == "elicitation/create"
    assert ack["result"]["resultType"] == "complete"
    assert "wiped" in done["result"]["content"][0]["text"]
    assert "inputRequests" not in done


async def test_tasks_result_and_tasks_list_are_gone(raw: Raw) -> None:
    """SEP-2663 removed tasks/result and tasks/list: both answer -32601."""
    with anyio.fail_after(30):
        answers = [
            await raw.send("tasks/result", {"taskId": "x"}),
            await raw.send("tasks/list", {}),
        ]
    assert [answer["error"]["code"] for answer in answers] == [-32601, -32601]


async def test_a_handler_begun_task_asks_in_rounds_then_becomes_a_task(raw: Raw) -> None:
    """task_begins="handler": round one asks (input_required, no task), round two with the
    answer becomes a task (no requestState), whose result holds the answer."""
    call = {"name": "jobs", "arguments": {"action": "onboard"}}
    with anyio.fail_after(30):
        first = (await raw.send("tools/call", call))["result"]
        answer = {"who": {"action": "accept", "content": {"name": "Ada"}}}
        again = {**call, "inputResponses": answer, "requestState": first["requestState"]}
        second = (await raw.send("tools/call", again))["result"]
        done = await raw.until(second["taskId"], "completed", "failed")
    assert first["resultType"] == "input_required"
    assert "who" in first["inputRequests"]
    assert "taskId" not in first
    assert second["resultType"] == "task"
    assert "requestState" not in second
    assert "welcome Ada" in done["result"]["content"][0]["text"]


async def test_a_tasks_call_goes_through_the_pipeline(raw: Raw, probe: Probe) -> None:
    """Middleware sees a task's call with its caller, and scopes refuse it as a plain call's
    (the task completes with the FORBIDDEN result)."""
    with anyio.fail_after(30):
        quick = await raw.until((await raw.call("quick"))["taskId"], "completed")
        purge = await raw.until((await raw.call("purge"))["taskId"], "completed")
    assert "quick done" in quick["result"]["content"][0]["text"]
    assert purge["result"]["isError"] is True
    assert "FORBIDDEN" in purge["result"]["content"][0]["text"]
    assert ("quick", "alice", False) in probe.seen
    assert any(action == "purge" and rejected for action, _, rejected in probe.seen)


async def test_an_mcp_name_naming_another_task_is_refused(raw: Raw) -> None:
    """tasks/* with an Mcp-Name other than its taskId is -32020 with HTTP 400; the same
    name, or none, is served."""
    with anyio.fail_after(30):
        task_id = (await raw.call("quick"))["taskId"]
        wrong = await raw.get(task_id, name="another-task")
        wrong_status = raw.status
        right = await raw.get(task_id, name=f"  {task_id} ")
    assert (wrong_status, wrong["error"]["code"]) == (400, -32020)
    assert right["result"]["taskId"] == task_id


async def test_a_server_whose_runner_is_not_running_says_so(probe: Probe) -> None:
    """Served by hand without holding the task runner open, a task call is refused with an
    error saying why (and the task is failed), never left working forever."""
    server = build_server(tasks_app(probe))
    options: dict[str, Any] = {"mode": "2026-07-28", "extensions": [advertise(EXTENSION)]}
    with anyio.fail_after(30):
        async with Client(server, **options) as client:
            with pytest.raises(MCPError, match="task runner is not running"):
                await client.session.call_tool("jobs", {"action": "quick"}, allow_claimed=True)
