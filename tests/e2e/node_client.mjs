// Lists the tools and calls one with the official TypeScript SDK; prints one JSON object.
// Usage: node node_client.mjs stdio '["python", "-m", ...]' TOOL ARGS_JSON
//        node node_client.mjs http URL TOOL ARGS_JSON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, endpoint, tool, args] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const [command, ...commandArgs] = JSON.parse(endpoint);
  transport = new StdioClientTransport({ command, args: commandArgs, stderr: "ignore" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(endpoint));
}
const client = new Client({ name: "mcpfusion-e2e-node", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.tools, result }));
await client.close();
