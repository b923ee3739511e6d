// Lists and reads resources, gets prompts (valid and invalid) and completes with the
// official TypeScript SDK; prints one JSON object.
// Usage: node node_surface.mjs stdio '["python", "-m", ...]' -
//        node node_surface.mjs http URL BEARER_TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, endpoint, token] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const [command, ...commandArgs] = JSON.parse(endpoint);
  transport = new StdioClientTransport({ command, args: commandArgs, stderr: "ignore" });
} else {
  const headers = { Authorization: `Bearer ${token}` };
  transport = new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } });
}
const client = new Client({ name: "mcpfusion-e2e-node", version: "1.0.0" });
await client.connect(transport);

async function attempt(fn) {
  try {
    return { result: await fn() };
  } catch (error) {
    return { error: { code: error.code, message: error.message, data: error.data } };
  }
}

const out = {
  capabilities: client.getServerCapabilities(),
  resources: await attempt(() => client.listResources()),
  templates: await attempt(() => client.listResourceTemplates()),
  read: await attempt(() => client.readResource({ uri: "billing://invoices/INV-00001" })),
  missing: await attempt(() => client.readResource({ uri: "billing://invoices/INV-99999" })),
  prompts: await attempt(() => client.listPrompts()),
  prompt: await attempt(() =>
    client.getPrompt({ name: "collections_call", arguments: { customer_id: "CUS-0013" } }),
  ),
  badPrompt: await attempt(() =>
    client.getPrompt({ name: "collections_call", arguments: { customer_id: "nobody" } }),
  ),
  completion: await attempt(() =>
    client.complete({
      ref: { type: "ref/prompt", name: "collections_call" },
      argument: { name: "customer_id", value: "CUS-001" },
    }),
  ),
};
console.log(JSON.stringify(out));
await client.close();
