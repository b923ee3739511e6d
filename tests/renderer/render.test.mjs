// The renderer's result-to-DOM mapping, in jsdom (no browser); run by test_renderer_js.py.
//
// MF_FIXTURES: a JSON file of CallToolResults the framework produced, by name.
// MF_RENDERER: the folder of renderer.js and vendor/.
// MF_NODE_MODULES: the folder holding jsdom's node_modules.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";

const require = createRequire(path.join(process.env.MF_NODE_MODULES, "package.json"));
const { JSDOM } = require("jsdom");
const fixtures = JSON.parse(readFileSync(process.env.MF_FIXTURES, "utf8"));
const source = (...parts) => readFileSync(path.join(process.env.MF_RENDERER, ...parts), "utf8");
const SCRIPTS = [
  source("vendor", "dompurify", "purify.min.js"),
  source("vendor", "marked", "marked.umd.js"),
];
const RENDERER = source("renderer.js");

/** A page with the renderer, DOMPurify and marked; echarts and mermaid are recording stubs. */
function page() {
  const dom = new JSDOM('<!DOCTYPE html><body><main id="mcpfusion-root"></main></body>', {
    runScripts: "outside-only",
    pretendToBeVisual: true,
  });
  const { window } = dom;
  const seen = { options: [], mermaidConfig: null, diagrams: [] };
  window.echarts = {
    init: () => ({
      setOption: (option) => seen.options.push(option),
      on: (event, listener) => event === "finished" && setTimeout(listener, 0),
      dispose: () => {},
      resize: () => {},
    }),
  };
  window.mermaid = {
    initialize: (config) => (seen.mermaidConfig = config),
    render: async (id, text) => {
      seen.diagrams.push(text);
      return {
        svg:
          '<svg xmlns="http://www.w3.org/2000/svg" id="' + id + '"><script>window.__executed.push(1)</script>' +
          '<g onclick="window.__executed.push(2)"><text>' + text.length + " chars</text></g></svg>",
      };
    },
  };
  window.__executed = [];
  for (const script of [...SCRIPTS, RENDERER]) window.eval(script);
  const root = window.document.getElementById("mcpfusion-root");
  return { window, root, seen };
}

async function rendered(name) {
  const p = page();
  await p.window.mcpfusion.render(fixtures[name]);
  return p;
}

function handlers(root) {
  return [...root.querySelectorAll("*")].flatMap((node) =>
    [...node.attributes].filter((a) => a.name.startsWith("on")).map((a) => a.name),
  );
}

test("parse names every block kind of SPEC section 2 in wire order", () => {
  const { window } = page();
  const kinds = window.mcpfusion.parse(fixtures.all_kinds).blocks.map((b) => b.kind);
  assert.deepEqual(kinds, ["data", "ui", "ui", "ui", "ui", "ui", "ui", "ui", "directives", "rules", "suggestions"]);
});

test("a 50-row table becomes an HTML table with one row per item", async () => {
  const { root } = await rendered("table");
  const rows = [...root.querySelectorAll(".mf-markdown table tbody tr")];
  assert.equal(rows.length, 50);
  assert.equal(rows[0].cells[0].textContent, "ORD-001");
  assert.equal(rows[49].cells[0].textContent, "ORD-050");
  assert.equal(root.querySelector(".mf-title").textContent, "Orders");
});

test("HTML in a table cell or in markdown is shown as text, not parsed", async () => {
  const { root, window } = await rendered("hostile");
  assert.equal(root.querySelectorAll("img, svg, script, iframe").length, 0);
  assert.deepEqual(handlers(root), []);
  const cells = [...root.querySelectorAll("td")].map((td) => td.textContent);
  assert.deepEqual(cells, [
    "<img src=x onerror=window.__executed.push('img')>",
    "</script><script>window.__executed.push('script')</script>",
  ]);
  const text = root.textContent;
  assert.ok(text.includes("Customer <img src=x onerror=window.__executed.push('img')>"));
  assert.ok(text.includes("</script><script>window.__executed.push('script')</script>"));
  assert.ok(text.includes("<svg onload=window.__executed.push('svg')>"));
  assert.deepEqual(window.__executed, []);
});

test("a javascript: link keeps its text and loses its href", async () => {
  const { root } = await rendered("hostile");
  const links = [...root.querySelectorAll("a")];
  assert.ok(links.some((a) => a.textContent === "click me"));
  for (const link of links) assert.ok(!/^\s*javascript:/i.test(link.getAttribute("href") || ""));
});

test("a chart option is parsed as JSON: a function string stays a string", async () => {
  const { seen } = await rendered("hostile");
  const [option] = seen.options;
  assert.equal(typeof option.series[0].label.formatter, "string");
  assert.ok(option.series[0].label.formatter.startsWith("function"));
  assert.equal(option.tooltip.renderMode, "richText");
  assert.equal(option.title.link, undefined);
});

test("a chart whose option is not JSON shows the error and its source as text", async () => {
  const { root, seen } = await rendered("bad_chart");
  assert.equal(seen.options.length, 0);
  assert.match(root.querySelector(".mf-failure").textContent, /not valid JSON/);
  assert.equal(root.querySelector(".mf-chart pre").textContent, "{not json");
});

test("mermaid runs in strict mode and its SVG is sanitized again", async () => {
  const { root, seen, window } = await rendered("diagram");
  assert.equal(seen.mermaidConfig.securityLevel, "strict");
  assert.ok(seen.mermaidConfig.secure.includes("securityLevel"));
  assert.equal(seen.diagrams[0], "graph LR\n  placed --> paid");
  const svg = root.querySelector(".mf-mermaid svg");
  assert.ok(svg);
  assert.equal(svg.querySelectorAll("script").length, 0);
  assert.deepEqual(handlers(root), []);
  assert.deepEqual(window.__executed, []);
});

test("code is inserted as text under its language, reserved tags shown as written", async () => {
  const { root } = await rendered("code");
  const code = root.querySelector('[data-type="python"] pre code');
  assert.equal(code.className, "language-python");
  assert.equal(code.textContent, "print('</script>')\n# <domain_rules>");
  assert.equal(root.querySelector(".mf-lang").textContent, "python");
});

test("a json block is pretty-printed text", async () => {
  const { root } = await rendered("code");
  const text = root.querySelector('[data-type="json"] pre').textContent;
  assert.deepEqual(JSON.parse(text), { a: [1, 2], b: "<b>" });
});

test("the truncation notice is a summary callout", async () => {
  const { root } = await rendered("table");
  const summary = root.querySelector(".mf-summary");
  assert.match(summary.textContent, /Summary: ⚠️ Dataset truncated\. 50 shown, 10 hidden/);
  assert.equal(summary.querySelector("strong").textContent, "Summary");
});

test("rules, directives and suggestions become small annotations", async () => {
  const { root } = await rendered("all_kinds");
  const notes = [...root.querySelectorAll(".mf-note")].map((n) => n.dataset.kind);
  assert.deepEqual(notes, ["directives", "rules", "suggestions"]);
  const suggestion = root.querySelector(".mf-note-suggestions li");
  assert.equal(suggestion.querySelector("code").textContent, "orders.cancel");
  assert.equal(suggestion.textContent, "orders.cancel Cancel <stale> orders");
});

test("a tool error shows its code, message and the envelope as the agent reads it", async () => {
  const { root } = await rendered("tool_error");
  const box = root.querySelector(".mf-error");
  assert.equal(box.dataset.code, "NOT_FOUND");
  assert.equal(box.querySelector(".mf-error-message").textContent, "Order <ORD-9> does not exist.");
  assert.equal(box.querySelector(".mf-raw pre").textContent, fixtures.tool_error.content[0].text);
  assert.deepEqual([...box.querySelectorAll(".mf-actions li")].map((li) => li.textContent), ["orders.list_orders"]);
});

test("a validation error lists its fields", async () => {
  const { root } = await rendered("validation_error");
  const box = root.querySelector(".mf-error");
  assert.equal(box.dataset.code, "VALIDATION_ERROR");
  assert.equal(box.querySelector(".mf-fields code").textContent, "status");
});

test("the app bridge initializes, then renders the result the host sends", async () => {
  const { window } = page();
  const sent = [];
  const results = [];
  const bridge = window.mcpfusion.createBridge({ post: (m) => sent.push(m), onResult: (r) => results.push(r) });
  const started = bridge.start();
  assert.equal(sent[0].method, "ui/initialize");
  assert.equal(sent[0].params.protocolVersion, "2026-01-26");
  assert.ok(sent[0].params.appCapabilities);
  bridge.handle({ jsonrpc: "2.0", id: sent[0].id, result: { hostContext: { theme: "dark" } } });
  await started;
  assert.equal(sent[1].method, "ui/notifications/initialized");
  assert.equal(bridge.context.theme, "dark");
  bridge.handle({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: fixtures.table });
  assert.deepEqual(results, [fixtures.table]);
});

test("the app bridge answers ping and teardown, and refuses unknown requests", () => {
  const { window } = page();
  const sent = [];
  const bridge = window.mcpfusion.createBridge({ post: (m) => sent.push(m), onResult: () => {} });
  bridge.handle({ jsonrpc: "2.0", id: 7, method: "ping" });
  bridge.handle({ jsonrpc: "2.0", id: 8, method: "ui/resource-teardown", params: {} });
  bridge.handle({ jsonrpc: "2.0", id: 9, method: "tools/list" });
  bridge.handle({ jsonrpc: "1.0", id: 10, method: "ping" });
  assert.deepEqual(
    // JSON round trip: the objects come from jsdom's realm.
    JSON.parse(JSON.stringify(sent.map((m) => [m.id, m.result ?? m.error.code]))),
    [[7, {}], [8, {}], [9, -32601]],
  );
});

test("a top-level page does not start the app handshake", () => {
  const { window } = page();
  assert.equal(window.mcpfusion.app, null);
});

test("every tooltip of a chart option is drawn as text, nested options included", () => {
  const { window } = page();
  const option = window.mcpfusion.chartOption(
    JSON.stringify({
      tooltip: [{}],
      baseOption: { tooltip: {} },
      options: [{ tooltip: {} }],
      media: [{ option: { tooltip: [{ formatter: "<b>x</b>" }] } }],
      series: [{ type: "bar", tooltip: {} }],
    }),
  );
  const modes = [
    option.tooltip[0],
    option.baseOption.tooltip,
    option.options[0].tooltip,
    option.media[0].option.tooltip[0],
    option.series[0].tooltip,
  ].map((tooltip) => tooltip.renderMode);
  assert.deepEqual(modes, Array(5).fill("richText"));
});

test("a series type outside the chart build is refused by name", () => {
  const { window } = page();
  assert.throws(
    () => window.mcpfusion.chartOption('{"baseOption": {"series": [{"type": "sankey"}]}}'),
    /draws line, bar, pie, scatter series, not "sankey"/,
  );
});

test("markdown nests at most 32 containers; deeper markers stay as text", async () => {
  const { window, root } = page();
  const deep = "<ui_passthrough type=\"markdown\">\n" + ">".repeat(100) + " x\n</ui_passthrough>";
  await window.mcpfusion.render({ content: [{ type: "text", text: "d" }, { type: "text", text: deep }] });
  let depth = 0;
  for (let node = root.querySelector(".mf-markdown blockquote"); node; node = node.querySelector("blockquote")) depth += 1;
  assert.equal(depth, 32);
  assert.equal(root.querySelector(".mf-markdown").textContent.trim(), ">".repeat(68) + " x");
});
