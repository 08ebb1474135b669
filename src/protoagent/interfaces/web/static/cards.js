// Tool cards: one collapsed line per call (tool, what it acts on, who, status), the details
// (arguments, diff, output, decisions) behind it; a check is coloured by its outcome.
"use strict";

const PRESENTATION = { edit_file: "diff", create_file: "diff", replace_file: "diff", shell: "terminal",
  execute_command: "terminal", run_check: "terminal" };

const TITLE_KEYS = ["path", "command", "argv", "check_id", "query", "pattern", "task", "url", "process_id", "action"];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function oneLine(text, limit = 120) {
  const line = String(text).replace(/\s+/g, " ").trim();
  return line.length > limit ? line.slice(0, limit - 1) + "…" : line;
}

function cardTitle(tool, args) {
  if (!args || typeof args !== "object") return "";
  if (tool === "run_check") return `${args.check_id || ""}${args.phase ? ` (${args.phase})` : ""}`;
  for (const key of TITLE_KEYS) {
    const value = args[key];
    if (typeof value === "string" && value) return oneLine(value);
    if (Array.isArray(value) && value.length) return oneLine(value.join(" "));
  }
  const first = Object.values(args).find((v) => typeof v === "string" && v);
  return first ? oneLine(first) : "";
}

function diffBlock(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of text.split("\n")) {
    const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("diff --git") ? "file" : "";
    pre.append(el("span", kind ? { class: kind } : {}, line + "\n"));
  }
  return pre;
}

function outputBlock(text, presentation) {
  if (presentation === "terminal") return el("pre", { class: "terminal" }, text);
  return el("pre", {}, text.split("\n").slice(0, 60).join("\n"));
}

// What a finished call shows: a check by its outcome (a check that ran and failed is a failure,
// though its tool worked), a cancelled call as cancelled, anything else by its status.
function shownStatus(p) {
  const data = p.data || {};
  if (data.cancelled) return "cancelled";
  if (p.tool === "run_check" && p.status === "ok" && typeof data.outcome === "string") return data.outcome;
  return p.status;
}

// The URL of a preview server the call left running: only a loopback http address is linked.
function previewUrl(p) {
  const data = p.data || {};
  if (p.tool !== "preview" || !data.running || typeof data.url !== "string") return null;
  return /^http:\/\/127\.0\.0\.1:\d{2,5}\/$/.test(data.url) ? data.url : null;
}

class ToolCard {
  constructor(p, agent) {
    this.callId = p.call_id;
    this.tool = p.tool;
    this.presentation = p.presentation || PRESENTATION[p.tool] || "generic";
    this.preview = "";
    this.title = cardTitle(p.tool, p.arguments);
    this.ended = false;
    this.touched = false;
    this.status = el("span", { class: "status" }, "running");
    const args = Object.entries(p.arguments || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
    const head = el("summary", { class: "card-head" }, el("span", { class: "tool" }, p.tool),
      el("span", { class: "title" }, this.title), el("span", { class: "who" }, agent), this.status);
    head.addEventListener("click", () => { this.touched = true; });
    this.head = head;
    this.body = el("div", { class: "card-body" }, el("div", { class: "args" }, args.length > 400 ? args.slice(0, 399) + "…" : args));
    this.node = el("details", { class: "card status-running", "data-call-id": p.call_id, "data-presentation": this.presentation,
      "data-tool": p.tool }, head, this.body);
    if (this.presentation === "terminal") {
      this.live = el("pre", { class: "terminal live" });
      this.liveNext = 0;
      this.body.append(this.live);
      this.node.open = true;  // a running command shows its output as it comes
    }
  }

  setStatus(status, label) {
    this.node.className = `card status-${status}`;
    this.status.textContent = label || status;
  }

  waiting(isWaiting) {
    if (this.ended) return;
    this.setStatus(isWaiting ? "waiting" : "running", isWaiting ? "waiting for approval" : "running");
  }

  appendLive(text) {
    if (!this.live || !text) return;
    const atEnd = this.live.scrollTop + this.live.clientHeight >= this.live.scrollHeight - 4;
    this.live.textContent += text;
    if (atEnd) this.live.scrollTop = this.live.scrollHeight;  // follow the output unless you scrolled up
  }

  decided(p) {
    const by = p.source === "answerer" ? "you" : p.source;
    this.body.append(el("div", { class: "decision" }, `${p.decision === "allow" ? "allowed" : "denied"} by ${by}${p.reason ? `: ${p.reason}` : ""}`));
  }

  end(p) {
    this.ended = true;
    const shown = shownStatus(p);
    this.setStatus(shown);
    if (this.live) { this.live.remove(); this.live = null; }
    const diff = p.data && typeof p.data.diff === "string" ? p.data.diff : this.preview;
    if (this.presentation === "diff" && p.status === "ok" && diff) this.body.append(diffBlock(diff));
    this.body.append(outputBlock(p.output, this.presentation === "terminal" ? "terminal" : "generic"));
    const url = previewUrl(p);
    if (url) {
      // A running preview server: its loopback address, opened in a new tab.
      this.head.append(el("a", { class: "preview-link", href: url, target: "_blank", rel: "noopener noreferrer" }, url));
      return;
    }
    if (!this.touched) this.node.open = false;
  }
}
