// Drives MCP tasks (SEP-2663) with the v2 TypeScript SDK client on 2026-07-28; prints one JSON object.
// Usage: node node_tasks.mjs stdio '["python", "-m", ...]' SCENARIO
//        node node_tasks.mjs http URL SCENARIO
// SCENARIO: "cancel" (the ten-second task is polled until its progress shows, then cancelled),
//           "complete" (a short task is polled to its end), "unknown" (tasks/get of a made-up id)
//           "plain" (the short task called with the client's own callTool, which refuses it) or
//           "undeclared" (both actions called by a client that does not declare the extension).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const EXTENSION = "io.modelcontextprotocol/tasks";

// A Standard Schema (what client.request takes for a method it has no schema for) that
// accepts an object and rejects anything else: the test asserts the fields itself.
const anyObject = {
  "~standard": {
    version: 1,
    vendor: "mcpfusion-e2e",
    validate: (value) =>
      typeof value === "object" && value !== null && !Array.isArray(value)
        ? { value }
        : { issues: [{ message: "not an object" }] },
  },
};

// The client's 2026-07-28 codec refuses every resultType but "complete" and
// "input_required" (UnsupportedResultType) before any schema runs, so a CreateTaskResult
// cannot come back through callTool/request. Protocol documents _onresponse as the seam a
// subclass uses to consume the responses it owns; this one claims the answers of the
// tools/call requests it sent as tasks, and hands everything else on.
class TasksClient extends Client {
  _taskCalls = new Map();

  _onresponse(response) {
    const waiter = this._taskCalls.get(Number(response.id));
    if (waiter !== undefined && response.result?.resultType === "task") {
      this._taskCalls.delete(Number(response.id));
      // Settle the SDK's own pending request too, so its timeout and handlers are cleared.
      super._onresponse({
        jsonrpc: "2.0",
        id: response.id,
        error: { code: -32603, message: "claimed as a task" },
      });
      waiter(response.result);
      return;
    }
    super._onresponse(response);
  }

  // Calls a tool whose answer may be a task; resolves to the CreateTaskResult or the CallToolResult.
  callToolAsTask(name, args) {
    const id = this._requestMessageId; // the id the next request is sent with
    return new Promise((resolve, reject) => {
      this._taskCalls.set(id, resolve);
      this.callTool({ name, arguments: args }).then(resolve, (error) => {
        if (this._taskCalls.delete(id)) reject(error);
      });
    });
  }
}

const [mode, endpoint, scenario] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const [command, ...args] = JSON.parse(endpoint);
  transport = new StdioClientTransport({ command, args, stderr: "ignore" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(endpoint));
}
const client = new TasksClient(
  { name: "mcpfusion-e2e-node-tasks", version: "1.0.0" },
  {
    // The extension, declared as a client capability: on 2026-07-28 the client sends it
    // in the _meta envelope of every request.
    capabilities: scenario === "undeclared" ? {} : { extensions: { [EXTENSION]: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  },
);
await client.connect(transport);

const get = (taskId) => client.request({ method: "tasks/get", params: { taskId } }, anyObject);
const pause = () => new Promise((done) => setTimeout(done, 50));
const printed = { protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null };

if (scenario === "unknown") {
  try {
    await get("no-such-task");
    printed.refused = null;
  } catch (error) {
    printed.refused = { code: error.code, message: error.message };
  }
} else if (scenario === "undeclared") {
  await client.listTools();
  printed.inline = await client.callTool({ name: "jobs", arguments: { action: "crunch" } });
  try {
    printed.refused = await client.callTool({ name: "jobs", arguments: { action: "long" } });
  } catch (error) {
    printed.refused = { code: error.code, message: error.message };
  }
} else if (scenario === "plain") {
  await client.listTools();
  try {
    printed.result = await client.callTool({ name: "jobs", arguments: { action: "crunch" } });
  } catch (error) {
    printed.refused = { code: error.code, message: error.message, data: error.data };
  }
} else {
  await client.listTools(); // the 2026-07-28 client mirrors listed schemas into headers
  const action = scenario === "cancel" ? "long" : "crunch";
  const created = await client.callToolAsTask("jobs", { action });
  printed.created = created;
  let task = await get(created.taskId);
  if (scenario === "cancel") {
    while (task.statusMessage === undefined) {
      await pause();
      task = await get(created.taskId);
    }
    printed.progressed = task;
    printed.ack = await client.request(
      { method: "tasks/cancel", params: { taskId: created.taskId } },
      anyObject,
    );
    task = await get(created.taskId);
  } else {
    while (!["completed", "failed", "cancelled"].includes(task.status)) {
      await pause();
      task = await get(created.taskId);
    }
  }
  printed.ended = task;
}
console.log(JSON.stringify(printed));
await client.close();
