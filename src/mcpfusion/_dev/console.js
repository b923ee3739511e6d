/* The mcpfusion dev console: forms per action, the blocks the model reads, the rendered
 * result (the renderer in a sandboxed frame, driven over the MCP Apps protocol as a host
 * would), progress, and the tool list refreshed when the app reloads. */
(function () {
  "use strict";

  const token = new URLSearchParams(location.search).get("token") || "";
  const PROTOCOL_VERSION = "2026-01-26";
  const POLL_MS = 1000;
  const $ = (id) => document.getElementById(id);
  let version = null;
  let calls = 0;
  let progressEvents = 0;
  let busy = false;
  let fieldIds = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function api(path, init) {
    init = init || {};
    init.headers = Object.assign({ "X-Mcpfusion-Token": token }, init.headers || {});
    return fetch(path, init);
  }

  function showBanner(text) {
    const banner = $("banner");
    banner.hidden = !text;
    banner.textContent = text || "";
  }

  // -- the renderer, hosted as an MCP App ---------------------------------------------------

  const frame = $("renderer");
  const host = { ready: false, queue: [] };

  function toView(message) {
    frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  }

  function deliver(args, result) {
    const send = () => {
      toView({ method: "ui/notifications/tool-input", params: { arguments: args } });
      toView({ method: "ui/notifications/tool-result", params: result });
    };
    if (host.ready) send();
    else host.queue.push(send);
  }

  window.addEventListener("message", (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0" || typeof m.method !== "string") return;
    if (m.method === "ui/initialize") {
      toView({
        id: m.id,
        result: {
          protocolVersion: PROTOCOL_VERSION,
          hostInfo: { name: "mcpfusion dev", version: "1" },
          hostCapabilities: { openLinks: {} },
          hostContext: {
            theme: "light",
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            platform: "web",
          },
        },
      });
    } else if (m.method === "ui/notifications/initialized") {
      host.ready = true;
      document.body.dataset.rendererReady = "true";
      for (const send of host.queue.splice(0)) send();
    } else if (m.method === "ui/notifications/size-changed") {
      const height = m.params && Number(m.params.height);
      if (height > 0) frame.style.height = Math.min(Math.max(height, 240), 50000) + "px";
    } else if (m.method === "ui/open-link") {
      const url = m.params && String(m.params.url);
      if (/^(https?|mailto):/i.test(url)) window.open(url, "_blank", "noopener,noreferrer");
      toView({ id: m.id, result: {} });
    } else if (m.id !== undefined) {
      toView({ id: m.id, error: { code: -32601, message: "Method not found" } });
    }
  });
  frame.src = "/renderer?token=" + encodeURIComponent(token);

  // -- tools and forms --------------------------------------------------------------------

  function option(value, text) {
    const node = el("option", null, text);
    node.value = value;
    return node;
  }

  function fieldNode(field) {
    const box = el("div", "field");
    box.dataset.field = field.name;
    const id = "field-" + ++fieldIds;
    const label = el("label", field.required ? "required" : null, field.name);
    label.htmlFor = id;
    box.appendChild(label);
    let input;
    if (field.kind === "select" || field.kind === "boolean") {
      input = el("select");
      if (!field.required || field.kind === "boolean") {
        input.appendChild(option("", field.default ? "(default " + field.default + ")" : "(none)"));
      }
      for (const choice of field.kind === "boolean" ? ["true", "false"] : field.options) {
        input.appendChild(option(choice, choice));
      }
    } else if (field.kind === "checkboxes") {
      input = el("div", "choices");
      for (const choice of field.options) {
        const item = el("label");
        const check = el("input");
        check.type = "checkbox";
        check.value = choice;
        item.appendChild(check);
        item.appendChild(document.createTextNode(" " + choice));
        input.appendChild(item);
      }
    } else if (field.kind === "json") {
      input = el("textarea");
      input.rows = 3;
      input.placeholder = field.default || "JSON";
    } else {
      input = el("input");
      input.type = field.kind === "integer" || field.kind === "number" ? "number" : "text";
      if (field.kind === "integer") input.step = "1";
      if (field.kind === "number") input.step = "any";
      if (field.minimum !== null) input.min = String(field.minimum);
      if (field.maximum !== null) input.max = String(field.maximum);
      input.placeholder = field.default;
    }
    input.id = id;
    box.appendChild(input);
    if (field.description) box.appendChild(el("span", "hint", field.description));
    return box;
  }

  function formValues(node, form) {
    const values = {};
    for (const field of form.fields) {
      const box = node.querySelector('[data-field="' + CSS.escape(field.name) + '"]');
      if (field.kind === "checkboxes") {
        values[field.name] = Array.from(box.querySelectorAll("input:checked"), (c) => c.value);
      } else {
        values[field.name] = box.querySelector("select, input, textarea").value;
      }
    }
    return values;
  }

  function actionForm(form, open) {
    const node = el("form", "action");
    node.dataset.tool = form.tool;
    node.dataset.action = form.action || "";
    const details = el("details");
    details.open = open;
    details.appendChild(el("summary", "mono", form.action || form.tool));
    const fields = el("div", "fields");
    if (form.description) fields.appendChild(el("span", "hint", form.description));
    for (const field of form.fields) fields.appendChild(fieldNode(field));
    const button = el("button", "call", "Call");
    button.type = "submit";
    fields.appendChild(button);
    details.appendChild(fields);
    node.appendChild(details);
    node.addEventListener("submit", (event) => {
      event.preventDefault();
      call(form, node);
    });
    return node;
  }

  function toolSection(tool) {
    const section = el("section", "tool");
    section.dataset.tool = tool.name;
    section.dataset.tokens = String(tool.tokens);
    const head = el("h3");
    head.appendChild(el("span", "mono", tool.name));
    head.appendChild(el("span", "tokens", tool.tokens + " tokens"));
    section.appendChild(head);
    const about = el("details");
    about.appendChild(el("summary", "muted", "description"));
    about.appendChild(el("p", "tool-description", tool.description));
    section.appendChild(about);
    tool.forms.forEach((form, index) => section.appendChild(actionForm(form, index === 0)));
    return section;
  }

  async function loadTools() {
    const response = await api("/api/tools");
    const listing = await response.json();
    if (!response.ok) {
      showBanner(listing.error);
      return;
    }
    version = listing.version;
    showBanner(listing.error);
    $("app-name").textContent = listing.app.name + " " + listing.app.version;
    $("app-tokens").textContent =
      listing.tools.length + " tools · " + listing.total_tokens + " tokens in every prompt";
    const nav = $("tools");
    nav.textContent = "";
    for (const tool of listing.tools) nav.appendChild(toolSection(tool));
    document.body.dataset.toolsVersion = String(version);
  }

  async function poll() {
    try {
      const response = await api("/api/status");
      if (response.ok) {
        const status = await response.json();
        $("reload-state").textContent = status.error ? "reload failed" : "reloads on save";
        showBanner(status.error);
        if (status.version !== version) await loadTools();
      }
    } catch (_) {
      $("reload-state").textContent = "the console is not running";
    }
    setTimeout(poll, POLL_MS);
  }

  // -- calls ------------------------------------------------------------------------------

  function setProgress(report) {
    const bar = $("progress");
    const text = $("progress-text");
    if (report === null) {
      bar.hidden = true;
      text.textContent = "";
      return;
    }
    progressEvents += 1;
    document.body.dataset.progressEvents = String(progressEvents);
    bar.hidden = false;
    if (report.total) {
      bar.max = report.total;
      bar.value = report.done;
    } else {
      bar.removeAttribute("value");
    }
    const of = report.total ? report.done + "/" + report.total : String(report.done);
    text.textContent = of + (report.message ? " · " + report.message : "");
  }

  function showFailure(message) {
    const blocks = $("blocks");
    blocks.textContent = "";
    blocks.appendChild(el("p", "failure", message));
    showBanner(message);
  }

  function showResult(data) {
    const blocks = $("blocks");
    blocks.textContent = "";
    for (const block of data.blocks) {
      const article = el("article", "block kind-" + block.kind);
      article.dataset.kind = block.kind;
      article.dataset.tokens = String(block.tokens);
      article.appendChild(el("header", null, block.label + " · " + block.tokens + " tokens"));
      article.appendChild(el("pre", null, block.text));
      blocks.appendChild(article);
    }
    $("model-total").textContent =
      "· " + data.blocks.length + " blocks · " + data.total_tokens + " tokens · isError=" +
      Boolean(data.result.isError) + " · " + data.elapsed_ms + " ms";
    deliver(data.arguments, data.result);
  }

  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const chunk = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data = [];
        for (const line of chunk.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        onEvent(name, JSON.parse(data.join("\n")));
      }
    }
  }

  async function call(form, node) {
    if (busy) return;
    busy = true;
    setProgress(null);
    showBanner(null);
    $("call-name").textContent = form.tool + (form.action ? " · " + form.action : "");
    $("blocks").textContent = "";
    $("model-total").textContent = "";
    try {
      const response = await api("/api/call", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ tool: form.tool, action: form.action, values: formValues(node, form) }),
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({ error: response.statusText }));
        showFailure(body.error);
        return;
      }
      await readEvents(response, (name, data) => {
        if (name === "progress") setProgress(data);
        else if (name === "result") showResult(data);
        else if (name === "failure") showFailure(data.message);
      });
    } catch (error) {
      showFailure(String(error));
    } finally {
      busy = false;
      $("progress").hidden = true;
      calls += 1;
      document.body.dataset.calls = String(calls);
    }
  }

  loadTools().then(poll, (error) => showBanner(String(error)));
})();
