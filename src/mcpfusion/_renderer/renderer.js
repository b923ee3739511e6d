/* The mcpfusion renderer: shows a tool result's blocks to a person (SPEC §2, §4, §8, §9).
 *
 * Entry points, on window.mcpfusion:
 *   render(result, root?)  renders a CallToolResult ({content, isError, structuredContent});
 *                          resolves when charts and diagrams are drawn.
 *   parse(result)          the blocks of a result, by kind (no DOM).
 *   createBridge(options)  the MCP Apps (io.modelcontextprotocol/ui) side of a view; started
 *                          by itself when the document runs in a frame.
 *
 * Everything in a result is untrusted: markdown goes through DOMPurify, chart options are
 * JSON.parse'd and never evaluated, mermaid runs with securityLevel 'strict', code and
 * envelopes are inserted as text. A block that fails to render shows as a failure with its
 * text; the other blocks render all the same.
 *
 * The MCP App document leaves mermaid out (it would take the document past the 1 MiB an
 * SSE client accepts in one event): it names the library's parts in a
 * <meta name="mcpfusion-diagram-parts"> and, when a result has a diagram, reads them
 * through the host (resources/read) and runs them as one script its policy allows by hash.
 */
(function (global) {
  "use strict";

  const VERSION = "1";
  const PROTOCOL_VERSION = "2026-01-26";
  const RESERVED = [
    "ui_passthrough",
    "llm_directives",
    "domain_rules",
    "action_suggestions",
    "cache_invalidation",
    "tool_error",
    "validation_error",
  ];
  const BULLETS = {
    llm_directives: "directives",
    domain_rules: "rules",
    action_suggestions: "suggestions",
  };
  const NOTE_TITLES = {
    directives: "Directives for the model",
    rules: "Domain rules",
    suggestions: "Suggested next actions",
    invalidation: "Invalidates",
  };
  const UI_OPEN = /^<ui_passthrough((?: [a-z]+="[^"]*")*)>\n/;
  const UI_CLOSE = "\n</ui_passthrough>";
  const ATTR = / ([a-z]+)="([^"]*)"/g;
  const FENCE = /^(`{3,})([^`\n]*)\n([\s\S]*)\n\1$/;
  const INVALIDATION = /^<cache_invalidation caused_by="([^"]*)">\n([\s\S]*)\n<\/cache_invalidation>$/;
  const TOOL_ERROR = /^<tool_error code="([^"]*)" severity="([^"]*)">/;
  const VALIDATION_ERROR = /^<validation_error action="([^"]*)">/;
  const NEUTRALIZED = new RegExp("&lt;(?=\\s*/?\\s*(?:" + RESERVED.join("|") + "))", "gi");
  const JSON_START = '{["-0123456789tfn';
  const WIDTHS = { full: 6, half: 3, third: 2 };
  const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
  const CHART_WAIT_MS = 5000;
  const DIAGRAM_WAIT_MS = 60000;
  // Markdown's containers (blockquotes, lists) past this depth are shown as text: marked
  // parses them by recursion, and 1.7 KB of nested ">" overflowed the stack.
  const MAX_NESTING = 32;
  const CONTAINER = "[ \\t]{0,3}(?:>|[-+*](?=[ \\t])|\\d{1,9}[.)](?=[ \\t]))";
  const NESTED = new RegExp("^((?:" + CONTAINER + "){" + MAX_NESTING + "})((?:" + CONTAINER + ")+)", "gm");
  // Keys of an echarts option that make the library open windows or write HTML.
  const CHART_DROPPED_KEYS = new Set(["link", "sublink", "dataView"]);
  // The series of the vendored echarts build (its publisher's "common" build): any other
  // type would draw nothing, silently.
  const CHART_SERIES = new Set(["line", "bar", "pie", "scatter"]);

  // -- parsing (no DOM) -------------------------------------------------------------------

  const ENTITIES = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" };

  /** Undoes the escaping of XML attributes and element text. */
  function unescapeXml(text) {
    return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, name) => ENTITIES[name]);
  }

  /** Shows a neutralized reserved tag (SPEC §7) as it was written, for text displays. */
  function unneutralize(text) {
    return text.replace(NEUTRALIZED, "<");
  }

  function decodeJson(text) {
    if (!text || !JSON_START.includes(text[0])) return { json: false, value: null };
    try {
      return { json: true, value: JSON.parse(text) };
    } catch (_) {
      return { json: false, value: null };
    }
  }

  function all(pattern, text) {
    return Array.from(text.matchAll(pattern), (m) => m.slice(1).map(unescapeXml));
  }

  function first(pattern, text) {
    const m = pattern.exec(text);
    return m ? unescapeXml(m[1]) : null;
  }

  /** Reads a <tool_error> or <validation_error> envelope (SPEC §9), or returns null. */
  function parseError(text) {
    let m = TOOL_ERROR.exec(text);
    if (m) {
      const retry = first(/<retry_after>([\s\S]*?)<\/retry_after>/, text);
      return {
        kind: "error",
        envelope: "tool_error",
        text,
        code: unescapeXml(m[1]),
        severity: unescapeXml(m[2]),
        message: first(/<message>([\s\S]*?)<\/message>/, text) || "",
        recovery: first(/<recovery>([\s\S]*?)<\/recovery>/, text),
        actions: all(/<action>([\s\S]*?)<\/action>/g, text).map((a) => a[0]),
        details: all(/<detail key="([^"]*)">([\s\S]*?)<\/detail>/g, text),
        retryAfter: retry,
      };
    }
    m = VALIDATION_ERROR.exec(text);
    if (m) {
      return {
        kind: "error",
        envelope: "validation_error",
        text,
        code: "VALIDATION_ERROR",
        severity: "error",
        action: unescapeXml(m[1]),
        fields: all(/<field name="([^"]*)">([\s\S]*?)<\/field>/g, text),
        recovery: first(/<recovery>([\s\S]*?)<\/recovery>/, text),
      };
    }
    return null;
  }

  /** Reads a <ui_passthrough> block (SPEC §4.1), or returns null. */
  function parseUi(text) {
    const opening = UI_OPEN.exec(text);
    if (!opening || !text.endsWith(UI_CLOSE) || text.length < opening[0].length + UI_CLOSE.length) {
      return null;
    }
    const attrs = {};
    for (const [, key, value] of opening[1].matchAll(ATTR)) attrs[key] = unescapeXml(value);
    const content = text.slice(opening[0].length, text.length - UI_CLOSE.length);
    const fenced = FENCE.exec(content);
    const priority = attrs.priority === undefined ? null : Number(attrs.priority);
    return {
      kind: "ui",
      text,
      type: attrs.type || "",
      title: attrs.title || "",
      width: attrs.width || null,
      priority: Number.isFinite(priority) ? priority : null,
      content,
      lang: fenced ? fenced[2] : null,
      body: fenced ? fenced[3] : content,
    };
  }

  function parseBullets(text) {
    for (const tag of Object.keys(BULLETS)) {
      const head = "<" + tag + ">\n";
      const tail = "\n</" + tag + ">";
      if (text.startsWith(head) && text.endsWith(tail)) {
        const entries = text
          .slice(head.length, text.length - tail.length)
          .split("\n")
          .map((line) => (line.startsWith("- ") ? line.slice(2) : line));
        return { kind: BULLETS[tag], text, entries };
      }
    }
    const m = INVALIDATION.exec(text);
    if (m) {
      const entries = m[2].split("\n").map((line) => (line.startsWith("- ") ? line.slice(2) : line));
      return { kind: "invalidation", text, causedBy: unescapeXml(m[1]), entries };
    }
    return null;
  }

  function itemText(item) {
    if (typeof item === "string") return item;
    if (item && typeof item === "object" && typeof item.text === "string") return item.text;
    return null;
  }

  /** The blocks of a CallToolResult, in wire order, each with its kind (SPEC §2). */
  function parse(result) {
    const content = result && Array.isArray(result.content) ? result.content : [];
    const blocks = content.map((item, index) => {
      const text = itemText(item);
      if (text === null) {
        const type = item && typeof item === "object" ? String(item.type) : typeof item;
        return { kind: "media", type, mimeType: item && item.mimeType, data: item && item.data };
      }
      if (index === 0) {
        const error = parseError(text);
        if (error) return error;
        const decoded = decodeJson(text);
        return { kind: "data", text, json: decoded.json, value: decoded.value };
      }
      return parseUi(text) || parseBullets(text) || { kind: "other", text };
    });
    return {
      isError: Boolean(result && result.isError),
      structuredContent: result ? result.structuredContent : undefined,
      blocks,
    };
  }

  /** A chart option from a block body: parsed, never evaluated, stripped of link keys. */
  function chartOption(body) {
    const option = JSON.parse(body);
    if (!option || typeof option !== "object" || Array.isArray(option)) {
      throw new Error("an echarts block holds a JSON object");
    }
    const stack = [option];
    while (stack.length) {
      const node = stack.pop();
      for (const key of Object.keys(node)) {
        const value = node[key];
        if (CHART_DROPPED_KEYS.has(key)) {
          delete node[key];
        } else if (value && typeof value === "object") {
          // Tooltips drawn on the canvas: the HTML mode writes formatter output as markup.
          // Every tooltip, wherever it is: baseOption, options and media[].option are
          // options too, merged into the top level by echarts.
          if (key === "tooltip") textTooltips(value);
          if (key === "series") supportedSeries(value);
          stack.push(value);
        }
      }
    }
    return option;
  }

  function supportedSeries(value) {
    for (const series of Array.isArray(value) ? value : [value]) {
      const type = series && typeof series === "object" ? series.type : undefined;
      if (typeof type === "string" && !CHART_SERIES.has(type)) {
        const error = new Error(
          "the renderer draws " + Array.from(CHART_SERIES).join(", ") + " series, not " + JSON.stringify(type),
        );
        error.unsupported = true;
        throw error;
      }
    }
  }

  function textTooltips(value) {
    for (const tooltip of Array.isArray(value) ? value : [value]) {
      if (tooltip && typeof tooltip === "object") tooltip.renderMode = "richText";
    }
  }

  // -- DOM helpers ------------------------------------------------------------------------

  const doc = global.document;

  function el(tag, className, text) {
    const node = doc.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  let purifier = null;
  let markdown = null;

  function purify() {
    if (purifier === null) {
      purifier = global.DOMPurify(global);
      purifier.addHook("afterSanitizeAttributes", (node) => {
        if (node.tagName === "A" && node.hasAttribute("href")) {
          node.setAttribute("target", "_blank");
          node.setAttribute("rel", "noopener noreferrer");
        }
        // Remote images would be fetched (a beacon); data: images stay.
        if (node.tagName === "IMG" && !/^data:image\//i.test(node.getAttribute("src") || "")) {
          node.removeAttribute("src");
        }
      });
    }
    return purifier;
  }

  const MARKDOWN_POLICY = {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option"],
    FORBID_ATTR: ["style", "id", "name"],
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  };

  const SVG_POLICY = {
    USE_PROFILES: { svg: true, svgFilters: true },
    ADD_TAGS: ["style"],
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  };

  const HTML_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function escapeHtml(text) {
    return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
  }

  function markedInstance() {
    if (markdown === null) {
      markdown = new global.marked.Marked({ gfm: true, breaks: false, async: false });
      // HTML inside markdown is data (a customer called "<b>x</b>"): shown as text.
      markdown.use({ renderer: { html: (token) => escapeHtml(token.raw) } });
    }
    return markdown;
  }

  /** Escapes the container markers past MAX_NESTING on each line, so they show as text. */
  function boundNesting(text) {
    return text.replace(
      NESTED,
      (_, kept, excess) =>
        kept + excess.replace(/([>+*-])|(\d{1,9})([.)])/g, (m, mark, digits, dot) => (mark ? "\\" + mark : digits + "\\" + dot)),
    );
  }

  /** Markdown as a sanitized DOM fragment. */
  function markdownFragment(text, inline) {
    const md = markedInstance();
    const html = inline ? md.parseInline(text) : md.parse(boundNesting(text));
    return purify().sanitize(html, MARKDOWN_POLICY);
  }

  function pre(text, className) {
    const node = el("pre", className);
    node.appendChild(el("code", null, text));
    return node;
  }

  // -- rendering --------------------------------------------------------------------------

  let theme = "light";
  let renders = 0;
  let charts = [];
  let diagrams = 0;
  let lastResult = null;

  function renderData(block, open) {
    const box = el("details", "mf-data");
    box.open = open;
    box.appendChild(el("summary", null, block.json ? "Data (JSON)" : "Data"));
    const shown = block.json ? JSON.stringify(block.value, null, 2) : unneutralize(block.text);
    box.appendChild(pre(shown, "mf-text"));
    return box;
  }

  function renderError(block) {
    const box = el("section", "mf-error");
    box.dataset.kind = "error";
    box.dataset.code = block.code;
    box.dataset.severity = block.severity;
    const head = el("header", "mf-error-head");
    head.appendChild(el("strong", null, block.code));
    head.appendChild(el("span", "mf-badge", block.severity));
    if (block.envelope === "validation_error") head.appendChild(el("span", null, block.action));
    box.appendChild(head);
    if (block.message) box.appendChild(el("p", "mf-error-message", block.message));
    if (block.fields && block.fields.length) {
      const list = el("ul", "mf-fields");
      for (const [name, what] of block.fields) {
        const item = el("li");
        item.appendChild(el("code", null, name));
        item.appendChild(doc.createTextNode(" " + what));
        list.appendChild(item);
      }
      box.appendChild(list);
    }
    if (block.recovery) box.appendChild(el("p", "mf-recovery", block.recovery));
    if (block.actions && block.actions.length) {
      const list = el("ul", "mf-actions");
      for (const action of block.actions) list.appendChild(el("li", null, action));
      box.appendChild(list);
    }
    if (block.retryAfter) box.appendChild(el("p", "mf-retry", "Retry after " + block.retryAfter));
    const raw = el("details", "mf-raw");
    raw.open = true;
    raw.appendChild(el("summary", null, "As the agent receives it"));
    raw.appendChild(pre(block.text, "mf-text"));
    box.appendChild(raw);
    return box;
  }

  function renderNote(block) {
    const box = el("aside", "mf-note mf-note-" + block.kind);
    box.dataset.kind = block.kind;
    let title = NOTE_TITLES[block.kind];
    if (block.kind === "invalidation" && block.causedBy) title += " (after " + block.causedBy + ")";
    box.appendChild(el("h4", null, title));
    const list = el("ul");
    for (const entry of block.entries) {
      const item = el("li");
      const colon = block.kind === "suggestions" ? entry.indexOf(": ") : -1;
      if (colon > 0) {
        item.appendChild(el("code", null, entry.slice(0, colon)));
        item.appendChild(doc.createTextNode(" " + entry.slice(colon + 2)));
      } else {
        item.textContent = entry;
      }
      list.appendChild(item);
    }
    box.appendChild(list);
    return box;
  }

  function renderMedia(block) {
    const box = el("section", "mf-block mf-media");
    box.dataset.kind = "media";
    if (block.type === "image" && IMAGE_TYPES.includes(block.mimeType) && typeof block.data === "string") {
      const image = el("img");
      image.alt = "image";
      image.src = "data:" + block.mimeType + ";base64," + block.data.replace(/[^A-Za-z0-9+/=]/g, "");
      box.appendChild(image);
    } else {
      box.appendChild(el("p", "mf-muted", "A content item of type " + block.type + " (not shown)."));
    }
    return box;
  }

  /** One UI block's card; returns [card, pending work to run once it is in the page]. */
  function renderUi(block) {
    const card = el("section", "mf-block");
    card.dataset.kind = "ui";
    card.dataset.type = block.type;
    card.style.gridColumn = "span " + (WIDTHS[block.width] || WIDTHS.full);
    if (block.priority !== null) card.dataset.priority = String(block.priority);
    if (block.title) card.appendChild(el("h3", "mf-title", block.title));
    const body = el("div", "mf-body");
    card.appendChild(body);
    let later = null;
    const type = block.type;
    if (type === "markdown") {
      body.classList.add("mf-markdown");
      body.appendChild(markdownFragment(block.content, false));
    } else if (type === "summary") {
      body.classList.add("mf-summary");
      body.appendChild(markdownFragment(block.content, true));
    } else if (type === "echarts") {
      body.classList.add("mf-chart");
      later = () => drawChart(body, block);
    } else if (type === "mermaid") {
      body.classList.add("mf-mermaid");
      later = () => drawDiagram(body, block);
    } else if (type === "json") {
      const decoded = decodeJson(block.body);
      const shown = decoded.json ? JSON.stringify(decoded.value, null, 2) : unneutralize(block.body);
      body.appendChild(pre(shown, "mf-code"));
    } else if (block.lang !== null) {
      body.appendChild(el("span", "mf-lang", block.lang || type));
      const code = pre(unneutralize(block.body), "mf-code");
      code.firstChild.className = "language-" + (block.lang || type).replace(/[^\w-]/g, "");
      body.appendChild(code);
    } else {
      body.appendChild(pre(unneutralize(block.content), "mf-text"));
    }
    return [card, later];
  }

  function failed(body, what, error, source) {
    body.textContent = "";
    body.appendChild(el("p", "mf-failure", what + ": " + (error && error.message ? error.message : String(error))));
    if (source !== undefined) body.appendChild(pre(source, "mf-code"));
  }

  function drawChart(body, block) {
    let option;
    try {
      option = chartOption(block.body);
    } catch (error) {
      const what = error.unsupported ? "This chart could not be drawn" : "This chart's option is not valid JSON";
      failed(body, what, error, block.body);
      return Promise.resolve();
    }
    try {
      const chart = global.echarts.init(body, theme === "dark" ? "dark" : null, { renderer: "canvas" });
      charts.push(chart);
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, CHART_WAIT_MS);
        chart.on("finished", () => {
          clearTimeout(timer);
          resolve();
        });
        chart.setOption(option, { notMerge: true });
      });
    } catch (error) {
      failed(body, "This chart could not be drawn", error, block.body);
      return Promise.resolve();
    }
  }

  let mermaidReady = false;

  function setUpMermaid() {
    const mermaid = global.mermaid;
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: theme === "dark" ? "dark" : "default",
      htmlLabels: false,
      flowchart: { htmlLabels: false },
      suppressErrorRendering: true,
      // Diagram directives (%%{init}%%) may not change these.
      secure: ["secure", "securityLevel", "startOnLoad", "maxTextSize", "htmlLabels", "themeCSS", "flowchart"],
    });
    mermaidReady = true;
  }

  let diagramLibrary = null;

  /** The diagram library: inlined, or read in parts through the host, once. */
  function loadDiagrams() {
    if (global.mermaid) return Promise.resolve();
    if (diagramLibrary === null) {
      diagramLibrary = readDiagrams().catch((error) => {
        diagramLibrary = null; // a later result tries again
        throw error;
      });
    }
    return diagramLibrary;
  }

  function answerWithin(promise, what) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(what)), DIAGRAM_WAIT_MS);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  async function readDiagrams() {
    const meta = doc.querySelector('meta[name="mcpfusion-diagram-parts"]');
    const uris = meta ? JSON.parse(meta.content) : [];
    if (!uris.length || !api.app) {
      throw new Error("the diagram library is read through an MCP Apps host, and there is none");
    }
    const texts = await Promise.all(
      uris.map(async (uri) => {
        const read = await answerWithin(
          api.app.request("resources/read", { uri }),
          "the host did not answer resources/read of " + uri,
        );
        const item = read && Array.isArray(read.contents) ? read.contents[0] : null;
        if (!item || typeof item.text !== "string") throw new Error("no text read from " + uri);
        return item.text;
      }),
    );
    // Runs only if the parts join into the library whose hash the document's policy holds.
    const script = doc.createElement("script");
    script.textContent = texts.join("");
    doc.head.appendChild(script);
    if (!global.mermaid) throw new Error("the diagram library did not run");
  }

  async function drawDiagram(body, block) {
    try {
      await loadDiagrams();
      if (!mermaidReady) setUpMermaid();
      diagrams += 1;
      const { svg } = await global.mermaid.render("mf-diagram-" + diagrams, unneutralize(block.body));
      body.textContent = "";
      body.appendChild(purify().sanitize(svg, SVG_POLICY));
    } catch (error) {
      failed(body, "This diagram could not be drawn", error, block.body);
    }
  }

  function disposeCharts() {
    for (const chart of charts) {
      try {
        chart.dispose();
      } catch (_) {
        // A chart whose element is gone is already unusable.
      }
    }
    charts = [];
  }

  function defaultRoot() {
    let root = doc.getElementById("mcpfusion-root");
    if (!root) {
      root = el("main");
      root.id = "mcpfusion-root";
      doc.body.appendChild(root);
    }
    return root;
  }

  /** One block's node, where it goes (view, grid or notes), and any work for later. */
  function renderBlock(block, hasUi) {
    if (block.kind === "error") return ["view", renderError(block), null];
    if (block.kind === "data") return ["view", renderData(block, !hasUi), null];
    if (block.kind === "ui") return ["grid", ...renderUi(block)];
    if (block.kind === "media") return ["grid", renderMedia(block), null];
    if (block.kind === "other") {
      const card = el("section", "mf-block");
      card.dataset.kind = "other";
      card.style.gridColumn = "span 6";
      card.appendChild(pre(unneutralize(block.text), "mf-text"));
      return ["grid", card, null];
    }
    return ["notes", renderNote(block), null];
  }

  /** The card of a block whose rendering threw: the error, then the block's text. */
  function brokenBlock(block, error) {
    const card = el("section", "mf-block");
    card.dataset.kind = block.kind;
    if (typeof block.type === "string") card.dataset.type = block.type;
    card.style.gridColumn = "span 6";
    const body = el("div", "mf-body");
    card.appendChild(body);
    const text = block.kind === "ui" ? block.content : block.text;
    failed(body, "This block could not be shown", error, typeof text === "string" ? unneutralize(text) : undefined);
    return card;
  }

  /** Renders a CallToolResult into root (the document's #mcpfusion-root by default). */
  async function render(result, root) {
    root = root || defaultRoot();
    lastResult = result;
    disposeCharts();
    const parsed = parse(result);
    const view = el("div", "mf-result");
    view.dataset.isError = String(parsed.isError);
    const grid = el("div", "mf-grid");
    const notes = el("div", "mf-notes");
    const pending = [];
    const hasUi = parsed.blocks.some((b) => b.kind === "ui");
    const places = { view, grid, notes };
    for (const block of parsed.blocks) {
      // Each block on its own: whatever one does, the others (and the rules) are shown.
      try {
        const [place, node, later] = renderBlock(block, hasUi);
        places[place].appendChild(node);
        if (later) pending.push(later);
      } catch (error) {
        grid.appendChild(brokenBlock(block, error));
      }
    }
    if (grid.childNodes.length) view.appendChild(grid);
    if (notes.childNodes.length) view.appendChild(notes);
    if (parsed.structuredContent !== undefined && parsed.structuredContent !== null) {
      const box = el("details", "mf-structured");
      box.appendChild(el("summary", null, "structuredContent"));
      box.appendChild(pre(JSON.stringify(parsed.structuredContent, null, 2), "mf-text"));
      view.appendChild(box);
    }
    root.textContent = "";
    root.appendChild(view);
    // Charts and diagrams need their element in the page to measure it.
    for (const later of pending) await later();
    renders += 1;
    root.dataset.rendered = String(renders);
    return { blocks: parsed.blocks.length, isError: parsed.isError };
  }

  function showStatus(text) {
    const root = defaultRoot();
    root.textContent = "";
    root.appendChild(el("p", "mf-muted", text));
  }

  // -- MCP Apps ---------------------------------------------------------------------------

  /** The view side of MCP Apps: JSON-RPC over postMessage with the host (SEP-1865).
   *
   * options.post(message) sends to the host; options.onResult(result), onInput(arguments),
   * onCancelled(reason) and onContext(context) receive what the host sends.
   */
  function createBridge(options) {
    let nextId = 1;
    const pending = new Map();
    let context = {};

    function send(message) {
      options.post(Object.assign({ jsonrpc: "2.0" }, message));
    }

    function request(method, params) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        send({ id, method, params });
      });
    }

    function notify(method, params) {
      send({ method, params: params || {} });
    }

    function merge(update) {
      if (update && typeof update === "object") context = Object.assign({}, context, update);
      if (options.onContext) options.onContext(context);
    }

    function handle(message) {
      if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
      const params = message.params || {};
      if (message.method === undefined) {
        const waiting = pending.get(message.id);
        if (!waiting) return;
        pending.delete(message.id);
        if (message.error) waiting.reject(new Error(String(message.error.message || "error")));
        else waiting.resolve(message.result || {});
        return;
      }
      switch (message.method) {
        case "ui/notifications/tool-input":
          if (options.onInput) options.onInput(params.arguments || {});
          return;
        case "ui/notifications/tool-input-partial":
          return;
        case "ui/notifications/tool-result":
          options.onResult(params);
          return;
        case "ui/notifications/tool-cancelled":
          if (options.onCancelled) options.onCancelled(params.reason || "");
          return;
        case "ui/notifications/host-context-changed":
          merge(params);
          return;
        case "ui/resource-teardown":
        case "ping":
          if (message.id !== undefined) send({ id: message.id, result: {} });
          return;
        default:
          if (message.id !== undefined) {
            send({ id: message.id, error: { code: -32601, message: "Method not found" } });
          }
      }
    }

    async function start() {
      const result = await request("ui/initialize", {
        appInfo: { name: "mcpfusion-renderer", version: VERSION },
        appCapabilities: { availableDisplayModes: ["inline"] },
        protocolVersion: PROTOCOL_VERSION,
      });
      merge(result.hostContext || {});
      notify("ui/notifications/initialized", {});
      return result;
    }

    return {
      handle,
      start,
      request,
      notify,
      get context() {
        return context;
      },
    };
  }

  function applyContext(context) {
    const next = context.theme === "dark" ? "dark" : "light";
    const variables = context.styles && context.styles.variables;
    if (variables && typeof variables === "object") {
      for (const [key, value] of Object.entries(variables)) {
        if (key.startsWith("--") && typeof value === "string") {
          doc.documentElement.style.setProperty(key, value);
        }
      }
    }
    if (next !== theme) {
      theme = next;
      doc.documentElement.dataset.theme = theme;
      mermaidReady = false;
      if (lastResult) render(lastResult);
    }
  }

  function startApp() {
    const host = global.parent;
    let lastSize = "";
    const bridge = createBridge({
      post: (message) => host.postMessage(message, "*"),
      onResult: (result) => render(result).then(reportSize),
      onInput: () => showStatus("Running the tool…"),
      onCancelled: (reason) => showStatus("The call was cancelled" + (reason ? ": " + reason : ".")),
      onContext: applyContext,
    });
    function reportSize() {
      const width = Math.ceil(doc.documentElement.scrollWidth);
      const height = Math.ceil(doc.documentElement.scrollHeight);
      const size = width + "x" + height;
      if (size !== lastSize) {
        lastSize = size;
        bridge.notify("ui/notifications/size-changed", { width, height });
      }
    }
    global.addEventListener("message", (event) => {
      if (event.source === host) bridge.handle(event.data);
    });
    // Links open through the host: the view's frame has no navigation of its own.
    doc.addEventListener("click", (event) => {
      const link = event.target && event.target.closest ? event.target.closest("a[href]") : null;
      if (!link) return;
      event.preventDefault();
      if (/^(https?|mailto):/i.test(link.href)) bridge.request("ui/open-link", { url: link.href }).catch(() => {});
    });
    if (global.ResizeObserver) new global.ResizeObserver(reportSize).observe(doc.documentElement);
    bridge.start().catch(() => showStatus("The host did not answer ui/initialize."));
    return bridge;
  }

  global.addEventListener("resize", () => {
    for (const chart of charts) chart.resize();
  });

  const api = { version: VERSION, render, parse, chartOption, createBridge, app: null };
  global.mcpfusion = api;
  if (global.parent && global.parent !== global) api.app = startApp();
})(window);
