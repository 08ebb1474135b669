// The page folds the session's event stream into messages, tool cards, approvals and evidence.
// Every view is rebuilt from the log, so a reload or a second browser shows the same thing.
"use strict";

const PRESENTATION = { edit_file: "diff", create_file: "diff", replace_file: "diff", shell: "terminal",
  execute_command: "terminal", run_check: "terminal" };

const EFFECT_NAMES = { write: "file change", execute: "command" };

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

async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function diffBlock(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of text.split("\n")) {
    const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
    pre.append(el("span", kind ? { class: kind } : {}, line + "\n"));
  }
  return pre;
}

function outputBlock(text, presentation) {
  if (presentation === "terminal") return el("pre", { class: "terminal" }, text);
  return el("pre", {}, text.split("\n").slice(0, 60).join("\n"));
}

function yesNo(value) { return el("span", { class: value ? "yes" : "no" }, value ? "yes" : "no"); }

class SessionView {
  constructor(sessionId) {
    this.id = sessionId;
    this.transcript = document.getElementById("transcript");
    this.cards = new Map();
    this.streaming = new Map();
    this.checkArgs = new Map();
    this.checks = [];
    this.running = false;
  }

  apply(event) {
    const p = event.payload;
    const handler = this["on_" + event.type.replace(/\./g, "_")];
    if (handler) handler.call(this, p, event);
  }

  add(node) { this.transcript.append(node); return node; }

  on_session_created(p) {
    document.getElementById("title").textContent = `${p.title || this.id} · ${p.model} · approval ${p.approval_policy}`;
  }

  on_user_message(p, e) {
    const who = e.agent === "main" || e.agent === "architect" ? "you" : `task for ${e.agent}`;
    this.add(el("div", { class: "msg user" }, el("span", { class: "who" }, who), p.text));
  }

  on_model_delta(p, e) {
    let bubble = this.streaming.get(e.agent);
    if (!bubble) {
      bubble = this.add(el("div", { class: "msg assistant" }, el("span", { class: "who" }, e.agent), ""));
      this.streaming.set(e.agent, bubble);
    }
    bubble.lastChild.textContent += p.text;
  }

  on_model_completed(p, e) {
    let bubble = this.streaming.get(e.agent);
    this.streaming.delete(e.agent);
    if (!p.text.trim()) { if (bubble) bubble.remove(); return; }
    if (!bubble) bubble = this.add(el("div", { class: "msg assistant" }, el("span", { class: "who" }, e.agent), ""));
    bubble.lastChild.textContent = p.text;
  }

  on_tool_started(p, e) {
    const presentation = p.presentation || PRESENTATION[p.tool] || "generic";
    const args = Object.entries(p.arguments).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
    const status = el("span", { class: "status" }, "running");
    const card = el("div", { class: "card", "data-call-id": p.call_id, "data-presentation": presentation },
      el("div", { class: "card-head" }, el("span", { class: "tool" }, p.tool), el("span", { class: "who" }, e.agent), status),
      el("div", { class: "args" }, args.length > 400 ? args.slice(0, 399) + "…" : args));
    this.cards.set(p.call_id, { card, status, presentation, preview: "" });
    if (p.tool === "run_check") this.checkArgs.set(p.call_id, p.arguments);
    this.add(card);
  }

  on_approval_requested(p) {
    const entry = this.cards.get(p.call_id);
    if (!entry) return;
    entry.preview = p.preview;
    const preview = entry.presentation === "diff" ? diffBlock(p.preview) : outputBlock(p.preview, entry.presentation);
    const reason = el("input", { placeholder: "reason (for a denial; the model sees it)", size: "40" });
    const error = el("span", { class: "error" });
    const answer = (decision, scope) => async () => {
      try {
        await api("POST", `/api/approvals/${encodeURIComponent(p.call_id)}`,
          { decision, scope, reason: reason.value, session_id: this.id });
        prompt.querySelectorAll("button").forEach((b) => { b.disabled = true; });
      } catch (err) { error.textContent = err.message; }
    };
    const prompt = el("div", { class: "approval" },
      el("div", {}, `Approve this ${EFFECT_NAMES[p.effect] || p.effect}?`), preview,
      el("div", { class: "row" },
        el("button", { class: "approve", onclick: answer("allow", "once") }, "Approve"),
        el("button", { class: "approve-session secondary", onclick: answer("allow", "session") }, "Allow for this session"),
        el("button", { class: "deny danger", onclick: answer("deny", "once") }, "Deny"), reason, error));
    entry.prompt = prompt;
    entry.card.append(prompt);
    this.refreshPrompts();
  }

  on_approval_decided(p) {
    const entry = this.cards.get(p.call_id);
    if (!entry) return;
    if (entry.prompt) {
      entry.prompt.querySelector(".row").remove();
      entry.prompt.classList.add("answered");
      entry.prompt = null;
    }
    entry.card.append(el("div", { class: "decision" }, `${p.decision} (${p.source}): ${p.reason}`));
  }

  on_approval_rule_added(p) {
    const entry = this.cards.get(p.call_id);
    const target = p.rule.paths.length ? p.rule.paths.join(", ") : (p.rule.command.split("\n")[0] || "");
    const note = el("div", { class: "decision" }, `session rule added: ${p.rule.tool} on ${target}`);
    if (entry) entry.card.append(note); else this.add(note);
  }

  on_tool_ended(p) {
    const entry = this.cards.get(p.call_id);
    if (!entry) return;
    entry.card.classList.add(`status-${p.status}`);
    entry.status.textContent = p.status;
    const diff = p.data && typeof p.data.diff === "string" ? p.data.diff : entry.preview;
    if (entry.presentation === "diff" && p.status === "ok" && diff) entry.card.append(diffBlock(diff));
    entry.card.append(outputBlock(p.output, entry.presentation === "terminal" ? "terminal" : "generic"));
    if (p.tool === "run_check") this.recordCheck(p);
  }

  recordCheck(p) {
    const asked = this.checkArgs.get(p.call_id) || {};
    const data = p.data || {};
    const id = data.check_id || asked.check_id;
    if (typeof id !== "string" || p.status === "rejected") return;
    const outcome = p.status === "denied" ? "denied" : String(data.outcome || p.status);
    this.checks.push({ id, phase: String(data.phase || asked.phase || "verify"), outcome, tests: data.tests_run });
  }

  on_model_retrying(p) { this.add(el("div", { class: "notice retry" }, `retrying in ${p.delay_s.toFixed(1)} s (attempt ${p.attempt}): ${p.error}`)); }
  on_model_failed(p) { this.add(el("div", { class: "notice error" }, `model failed: ${p.error}`)); }
  on_workflow_phase(p) { this.add(el("div", { class: "phase" }, p.phase)); }
  on_worker_started(p) { this.add(el("div", { class: "notice" }, `${p.role} started`)); }
  on_verification_unavailable(p) { this.add(el("div", { class: "notice" }, `verification unavailable: ${p.note}`)); }
  on_run_contract(p) { this.add(el("div", { class: "decision" }, `surface ${p.surface} (${p.source}): ${p.reason}`)); }

  on_evidence_reported(p) {
    const box = document.getElementById("evidence");
    box.replaceChildren(el("h3", {}, "Evidence"),
      el("div", {}, "applied: ", yesNo(p.applied), "   verified: ", yesNo(p.verified), ` (${p.verification})   criteria_supported: `,
        yesNo(p.criteria_supported)));
    if (p.changed_files.length) box.append(el("div", {}, "changed files: " + p.changed_files.join(", ")));
    if (this.checks.length) {
      const table = el("table", { class: "checks" }, el("tr", {}, el("th", {}, "check"), el("th", {}, "phase"), el("th", {}, "outcome")));
      for (const c of this.checks) table.append(el("tr", {}, el("td", {}, c.id), el("td", {}, c.phase), el("td", {}, c.outcome)));
      box.append(table);
    }
    for (const note of p.notes) box.append(el("div", { class: "notice" }, "note: " + note));
    box.hidden = false;
  }

  on_run_ended(p) {
    this.add(el("div", { class: "phase run-ended" }, `run ${p.status}`));
    if (p.summary) this.add(el("div", { class: "msg assistant summary" }, p.summary));
  }

  setRunning(running) {
    this.running = running;
    const state = document.getElementById("state");
    state.textContent = running ? "running" : "idle";
    state.className = "state" + (running ? " running" : "");
    document.getElementById("cancel").disabled = !running;
    document.body.dataset.running = String(running);
    this.refreshPrompts();
  }

  refreshPrompts() {
    for (const entry of this.cards.values()) {
      if (entry.prompt) entry.prompt.querySelectorAll("button").forEach((b) => { b.disabled = !this.running; });
    }
  }
}

function openSession(sessionId) {
  document.getElementById("session-view").hidden = false;
  const view = new SessionView(sessionId);
  const base = `/api/sessions/${encodeURIComponent(sessionId)}`;
  // The recorded log comes in one response; the stream then carries what is appended after it.
  api("GET", `${base}/events`).then((recorded) => {
    let last = 0;
    const live = view.transcript;
    view.transcript = document.createDocumentFragment();  // build detached, attach once
    for (const event of recorded.events) { view.apply(event); last = event.seq; }
    live.append(view.transcript);
    view.transcript = live;
    document.body.dataset.lastSeq = String(last);  // the view now shows every recorded event
    view.setRunning(recorded.running);
    const source = new EventSource(`${base}/stream?after=${last}`);
    source.addEventListener("event", (message) => {
      const event = JSON.parse(message.data);
      view.apply(event);
      document.body.dataset.lastSeq = String(event.seq);
    });
    source.addEventListener("state", (message) => view.setRunning(JSON.parse(message.data).running));
  }).catch((err) => { document.getElementById("continue-error").textContent = err.message; });
  document.getElementById("cancel").addEventListener("click", async () => {
    try { await api("POST", `/api/sessions/${encodeURIComponent(sessionId)}/cancel`); }
    catch (err) { document.getElementById("continue-error").textContent = err.message; }
  });
  document.getElementById("continue").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const text = submit.target.elements.text;
    try {
      await api("POST", `/api/sessions/${encodeURIComponent(sessionId)}/messages`, { text: text.value });
      text.value = "";
    } catch (err) { document.getElementById("continue-error").textContent = err.message; }
  });
}

async function openList() {
  document.getElementById("list-view").hidden = false;
  const list = document.getElementById("sessions");
  const sessions = await api("GET", "/api/sessions");
  for (const s of sessions.reverse()) {
    list.append(el("li", {}, el("a", { href: `/sessions/${encodeURIComponent(s.session_id)}` }, s.title || s.session_id),
      el("span", { class: "who" }, new Date(s.created * 1000).toLocaleString()),
      el("span", { class: "who" }, `${s.events} events`), el("span", { class: "who" }, s.running ? "running" : "")));
  }
  document.getElementById("new-run").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    const form = Object.fromEntries(new FormData(submit.target).entries());
    if (!form.mode) delete form.mode;
    try {
      const { session_id } = await api("POST", "/api/runs", form);
      window.location.assign(`/sessions/${encodeURIComponent(session_id)}`);
    } catch (err) { document.getElementById("run-error").textContent = err.message; }
  });
}

const match = window.location.pathname.match(/^\/sessions\/([^/]+)$/);
if (match) openSession(decodeURIComponent(match[1])); else openList();
