// A certified OpenID provider (the oidc-provider package) for the sign-in tests, on 127.0.0.1.
// Usage: node oidc_provider.mjs CLIENT_ID CLIENT_SECRET
// Prints {"issuer": ...} once listening on a free port, then reads the one redirect URI of
// its client from stdin (the MCP server's, which needs the issuer to start) and prints
// {"ready": true}. Every account signs in with any password (the package's development
// interactions); its claims name the tenant "acme".
import http from "node:http";
import readline from "node:readline";
import Provider from "oidc-provider";

const [clientId, clientSecret] = process.argv.slice(2);

const server = http.createServer();
server.listen(0, "127.0.0.1", () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(JSON.stringify({ issuer }) + "\n");
  readline.createInterface({ input: process.stdin }).once("line", (redirectUri) => {
    start(issuer, redirectUri.trim());
  });
});

function start(issuer, redirectUri) {
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], tenant: ["tenant"] },
    scopes: ["openid", "email", "profile", "tenant", "offline_access"],
    findAccount: async (_ctx, id) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        email: `${id}@example.com`,
        email_verified: true,
        name: id,
        tenant: "acme",
      }),
    }),
    features: { devInteractions: { enabled: true } },
    // The test client speaks plain HTTP on loopback; the cookies need no Secure flag there.
    cookies: { keys: ["a test key, not a secret"] },
  });
  provider.proxy = false;
  server.on("request", provider.callback());
  process.stdout.write(JSON.stringify({ ready: true }) + "\n");
}

process.on("SIGTERM", () => server.close(() => process.exit(0)));
