// A certified OpenID provider (the oidc-provider package) for the sign-in tests, on 127.0.0.1.
// Usage: node oidc_provider.mjs CLIENT_ID CLIENT_SECRET [ACCESS_TOKEN_SECONDS]
// Prints {"issuer": ...} once listening on a free port, then reads the one redirect URI of
// its client from stdin (the MCP server's, which needs the issuer to start) and prints
// {"ready": true}. Every account signs in with any password (the package's development
// interactions); its claims name the tenant "acme", or for a login "name+TENANT" TENANT.
// The tenant claim comes with the tenant scope, and with profile as providers' group and
// tenant claims often do.
// Beside it, GitHub's shapes for the OAuth-only sign-in: /login/oauth/authorize (its login),
// /login/oauth/access_token (form-encoded, scope comma-separated, no expiry, errors with 200),
// and the API's /user, /user/emails and /user/orgs for the provider's access tokens.
import http from "node:http";
import readline from "node:readline";
import Provider from "oidc-provider";

const [clientId, clientSecret, accessSeconds] = process.argv.slice(2);
const EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const DOWNSTREAM = "https://ledger.example";
// Token exchange (RFC 8693) is not built into oidc-provider: this grant exchanges an access
// token of the facade's client for one of the same user, for DOWNSTREAM only.
async function exchange(ctx) {
  const { subject_token: subjectToken, audience } = ctx.oidc.params;
  const provider = ctx.oidc.provider;
  const subject = await provider.AccessToken.find(subjectToken);
  if (!subject || subject.clientId !== ctx.oidc.client.clientId || audience !== DOWNSTREAM) {
    ctx.status = 400;
    ctx.body = { error: "invalid_grant", error_description: "no token for that audience" };
    return;
  }
  const token = new provider.AccessToken({
    accountId: subject.accountId,
    client: ctx.oidc.client,
    grantId: subject.grantId,
    scope: subject.scope,
    claims: subject.claims,
    gty: "token_exchange",
  });
  ctx.body = {
    access_token: await token.save(),
    issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
    token_type: "Bearer",
    expires_in: token.expiration,
  };
}

// GitHub's numeric user id: stable per account, as GitHub's is.
const githubId = (id) => [...id].reduce((n, c) => (n * 31 + c.charCodeAt(0)) >>> 0, 7);

// The user of a bearer token, looked up in the provider itself (as introspection would):
// a live access token of the facade's client, or nothing.
async function bearer(provider, req) {
  const [kind, value] = (req.headers.authorization || "").split(" ");
  if (kind !== "Bearer" || !value) return undefined;
  const token = await provider.AccessToken.find(value);
  return token && token.clientId === clientId ? token.accountId : undefined;
}

function send(res, status, type, body) {
  res.writeHead(status, { "content-type": type });
  res.end(body);
}

async function github(provider, issuer, req, res) {
  const url = new URL(req.url, issuer);
  if (url.pathname === "/login/oauth/authorize") {
    res.writeHead(302, { location: `${issuer}/auth${url.search}` });
    res.end();
    return;
  }
  if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    // GitHub's documented request names the client in the form; oidc-provider's client
    // authenticates with Basic, so the wrapper moves it there.
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const [id, secret] = [form.get("client_id"), form.get("client_secret")];
    form.delete("client_id");
    form.delete("client_secret");
    const basic = Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64");
    const answer = await fetch(`${issuer}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
      body: form.toString(),
    });
    const got = id && secret ? await answer.json() : {};
    // A classic OAuth app's answer, as GitHub sends it without Accept: application/json.
    const reply = got.access_token
      ? { access_token: got.access_token, token_type: "bearer", scope: (got.scope || "").split(" ").join(",") }
      : { error: "bad_verification_code", error_description: "The code passed is incorrect or expired." };
    send(res, 200, "application/x-www-form-urlencoded; charset=utf-8", new URLSearchParams(reply).toString());
    return;
  }
  const id = await bearer(provider, req);
  if (!id) {
    send(res, 401, "application/json", JSON.stringify({ message: "Bad credentials" }));
    return;
  }
  const tenant = id.includes("+") ? id.split("+")[1] : "acme";
  const answers = {
    "/user": { id: githubId(id), login: id, name: id, email: null },
    "/user/emails": [
      { email: `${id}@old.example`, primary: false, verified: true, visibility: null },
      { email: `${id}@example.com`, primary: true, verified: true, visibility: "private" },
    ],
    "/user/orgs": [{ login: tenant, id: 1 }],
  };
  if (!(url.pathname in answers)) {
    send(res, 404, "application/json", JSON.stringify({ message: "Not Found" }));
    return;
  }
  send(res, 200, "application/json; charset=utf-8", JSON.stringify(answers[url.pathname]));
}

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
        grant_types: ["authorization_code", "refresh_token", EXCHANGE],
        response_types: ["code"],
      },
    ],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "tenant"],
      tenant: ["tenant"],
    },
    scopes: ["openid", "email", "profile", "tenant", "offline_access", "read:user", "user:email", "read:org"],
    findAccount: async (_ctx, id) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        email: `${id}@example.com`,
        email_verified: true,
        name: id,
        tenant: id.includes("+") ? id.split("+")[1] : "acme",
      }),
    }),
    features: { devInteractions: { enabled: true } },
    // Short-lived access tokens make the facade refresh its provider token (tests of it).
    ttl: accessSeconds ? { AccessToken: Number(accessSeconds) } : {},
    // The test client speaks plain HTTP on loopback; the cookies need no Secure flag there.
    cookies: { keys: ["a test key, not a secret"] },
  });
  provider.registerGrantType(EXCHANGE, exchange, [
    "subject_token",
    "subject_token_type",
    "requested_token_type",
    "audience",
    "scope",
  ]);
  provider.proxy = false;
  const callback = provider.callback();
  server.on("request", (req, res) => {
    if (req.url.startsWith("/login/oauth/") || req.url.startsWith("/user")) {
      github(provider, issuer, req, res).catch(() => send(res, 500, "text/plain", "error"));
    } else {
      callback(req, res);
    }
  });
  process.stdout.write(JSON.stringify({ ready: true }) + "\n");
}

process.on("SIGTERM", () => server.close(() => process.exit(0)));
