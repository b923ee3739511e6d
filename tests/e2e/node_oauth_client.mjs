// The official TypeScript SDK's OAuth client signing in, then calling a tool.
// Usage: node node_oauth_client.mjs URL REDIRECT_URI TOOL ARGS_JSON [CLIENT_METADATA_URL]
// With CLIENT_METADATA_URL the client is named by its metadata document's URL (CIMD)
// when the server supports it, instead of registering.
// Prints {"authorize": URL} when the SDK sends the user to the authorization server, reads
// the code the user's browser came back with from stdin, then prints {"result", "scope"}.
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [endpoint, redirect, tool, args, metadataUrl] = process.argv.slice(2);
const lines = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once("line", resolve));

const saved = {};
const provider = {
  get redirectUrl() {
    return redirect;
  },
  clientMetadataUrl: metadataUrl,
  get clientMetadata() {
    return {
      client_name: "TypeScript SDK client",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation: () => saved.client,
  saveClientInformation: (client) => {
    saved.client = client;
  },
  tokens: () => saved.tokens,
  saveTokens: (tokens) => {
    saved.tokens = tokens;
  },
  redirectToAuthorization: (url) => {
    process.stdout.write(JSON.stringify({ authorize: url.toString() }) + "\n");
  },
  saveCodeVerifier: (verifier) => {
    saved.verifier = verifier;
  },
  codeVerifier: () => saved.verifier,
};

const url = new URL(endpoint);
const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
try {
  await new Client({ name: "mcpfusion-e2e-oauth", version: "1.0.0" }).connect(first);
  throw new Error("connected without signing in");
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
}
await first.finishAuth((await nextLine()).trim());
const client = new Client({ name: "mcpfusion-e2e-oauth", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
process.stdout.write(JSON.stringify({ result, scope: saved.tokens.scope }) + "\n");
await client.close();
lines.close();
