// A handler that logs, asks and samples, driven by the official TypeScript SDK; prints one
// JSON object: the results, the log messages heard and the questions asked.
// Usage: node node_surface.mjs stdio '["python", "-m", ...]' ANSWER_JSON
//        node node_surface.mjs http URL ANSWER_JSON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, endpoint, answer] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const [command, ...commandArgs] = JSON.parse(endpoint);
  transport = new StdioClientTransport({ command, args: commandArgs, stderr: "ignore" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(endpoint));
}
const client = new Client(
  { name: "mcpfusion-e2e-node", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} } },
);
const logs = [];
const questions = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push([n.params.level, n.params.data]);
});
client.setRequestHandler(ElicitRequestSchema, (request) => {
  questions.push(request.params.message);
  return JSON.parse(answer);
});
client.setRequestHandler(CreateMessageRequestSchema, () => ({
  role: "assistant",
  content: { type: "text", text: "hi" },
  model: "scripted",
}));
await client.connect(transport);
await client.setLoggingLevel("warning");
const chat = await client.callTool({ name: "talk", arguments: { action: "chat" } });
const hello = await client.callTool({ name: "talk", arguments: { action: "hello" } });
console.log(JSON.stringify({ chat, hello, logs, questions }));
await client.close();
