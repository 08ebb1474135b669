// The session page folds the session's event stream into messages, tool cards, approvals and
// evidence. Every view is rebuilt from the log, so a reload or a second browser shows the same
// thing; which approvals are waiting comes from the server (the `state` of the stream).
"use strict";

const EFFECT_NAMES = { write: "file change", execute: "command" };
const LIVE_POLL_MS = 300;

async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(data.error || response.statusText), { status: response.status, data });
  return data;
}

function yesNo(value) { return el("span", { class: value ? "yes" : "no" }, value ? "yes" : "no"); }

function askNotificationPermission() {
  if ("Notification" in window && Notification.permission === "default") Notification.requestPermission().catch(() => {});
}

class SessionView {
  constructor(sessionId) {
    this.id = sessionId;
    this.base = `/api/sessions/${encodeURIComponent(sessionId)}`;
    this.transcript = document.getElementById("transcript");
    this.cards = new Map();
    this.requests = new Map();
    this.pending = [];
    this.streaming = new Map();
    this.checkArgs = new Map();
    this.checks = [];
    this.running = false;
    this.title = sessionId;
    this.polling = false;
    this.replaying = false;
    this.turn = 0;  // the user turn the events being applied belong to (each run is one)
  }

  apply(event) {
    if (event.type === "session.created" || event.type === "session.resumed") {
      if (event.type === "session.created") this.add(checkpointBar(this, 0));
      this.turn += 1;
    }
    const handler = this["on_" + event.type.replace(/\./g, "_")];
    if (handler) handler.call(this, event.payload, event);
  }

  add(node) {
    if (this.turn) node.dataset.turn = String(this.turn);
    this.transcript.append(node);
    return node;
  }

  on_session_created(p) {
    this.title = p.title || this.id;
    document.getElementById("title").textContent = `${this.title} · ${p.model} · approval ${p.approval_policy}`;
    this.refreshTitle();
  }

  on_session_resumed(p) {
    // A new run of the session: its evidence is its own, the previous run's leaves the screen.
    this.checks = [];
    document.getElementById("evidence").hidden = true;
    this.add(el("div", { class: "phase resumed" }, `continued · ${p.model}`));
  }

  on_user_message(p, e) {
    const who = e.agent === "main" || e.agent === "architect" ? "you" : `task for ${e.agent}`;
    this.add(el("div", { class: "msg user" }, el("span", { class: "who" }, who), el("div", { class: "text" }, p.text)));
  }

  on_model_delta(p, e) {
    let bubble = this.streaming.get(e.agent);
    if (!bubble) {
      bubble = this.add(el("div", { class: "msg assistant streaming" }, el("span", { class: "who" }, e.agent), el("div", { class: "text" })));
      this.streaming.set(e.agent, bubble);
    }
    bubble.lastChild.textContent += p.text;
  }

  on_model_completed(p, e) {
    let bubble = this.streaming.get(e.agent);
    this.streaming.delete(e.agent);
    if (!p.text.trim()) { if (bubble) bubble.remove(); return; }
    if (!bubble) bubble = this.add(el("div", { class: "msg assistant" }, el("span", { class: "who" }, e.agent), ""));
    bubble.classList.remove("streaming");
    bubble.lastChild.replaceWith(renderMarkdown(p.text));
  }

  on_tool_started(p, e) {
    const card = new ToolCard(p, e.agent);
    this.cards.set(p.call_id, card);
    if (p.tool === "run_check") this.checkArgs.set(p.call_id, p.arguments);
    this.add(card.node);
    this.pollLive();
  }

  on_approval_requested(p) {
    this.requests.set(p.call_id, p);
    const card = this.cards.get(p.call_id);
    if (card) card.preview = p.preview;
    if (!this.replaying) this.renderApprovals();
  }

  on_approval_decided(p) {
    this.requests.delete(p.call_id);
    this.pending = this.pending.filter((id) => id !== p.call_id);
    const card = this.cards.get(p.call_id);
    if (card) { card.decided(p); card.waiting(false); }
    if (!this.replaying) this.renderApprovals();
  }

  on_approval_rule_added(p) {
    const card = this.cards.get(p.call_id);
    const target = p.rule.paths.length ? p.rule.paths.join(", ") : (p.rule.command.split("\n")[0] || "");
    const note = el("div", { class: "decision" }, `session rule added: ${p.rule.tool} on ${target}`);
    if (card) card.body.append(note); else this.add(note);
  }

  on_tool_ended(p) {
    const card = this.cards.get(p.call_id);
    if (!card) return;
    card.end(p);
    if (p.tool === "run_check") this.recordCheck(p);
    if (["edit_file", "create_file", "replace_file"].includes(p.tool) && changesOpen()) showChanges(this);
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
    // The run's report names its checks; a log recorded before it did falls back to the ones seen.
    const checks = Array.isArray(p.checks) ? p.checks : this.checks;
    if (checks.length) {
      const table = el("table", { class: "checks" }, el("tr", {}, el("th", {}, "check"), el("th", {}, "phase"), el("th", {}, "outcome")));
      for (const c of checks) {
        table.append(el("tr", {}, el("td", {}, c.id), el("td", {}, c.phase), el("td", { class: `outcome outcome-${c.outcome}` }, c.outcome)));
      }
      box.append(table);
    }
    for (const note of p.notes) box.append(el("div", { class: "notice" }, "note: " + note));
    box.hidden = false;
    box.classList.remove("rewound");
    this.evidenceTurn = this.turn;
  }

  on_run_ended(p) {
    for (const card of this.cards.values()) {
      if (!card.ended) { card.ended = true; card.setStatus("cancelled", "no result recorded"); }
    }
    this.add(el("div", { class: `phase run-ended run-${p.status}` }, `run ${p.status}`));
    if (p.summary) this.add(el("div", { class: "msg assistant summary" }, renderMarkdown(p.summary)));
    this.add(checkpointBar(this, this.turn));
  }

  // A rewind hides later turns from the model: they stay on the page, marked, as in the log.
  on_session_rewound(p) {
    for (const turn of p.hidden_turns) {
      for (const node of this.transcript.querySelectorAll(`[data-turn="${turn}"]`)) {
        node.classList.add("rewound");
        if (node.classList.contains("checkpoint")) node.querySelectorAll("button").forEach((b) => { b.disabled = true; });
      }
    }
    if (p.hidden_turns.includes(this.evidenceTurn)) document.getElementById("evidence").classList.add("rewound");
    this.transcript.append(rewindNote(p));
    if (changesOpen() && !this.replaying) showChanges(this);
  }

  setState(state) {
    this.running = state.running;
    const shown = document.getElementById("state");
    shown.textContent = this.running ? "running" : "idle";
    shown.className = "state" + (this.running ? " running" : "");
    document.getElementById("cancel").disabled = !this.running;
    document.body.dataset.running = String(this.running);
    if (state.pending) this.setPending(state.pending);
    this.pollLive();
  }

  setPending(pending) {
    const fresh = pending.filter((id) => !this.pending.includes(id));
    this.pending = pending;
    this.renderApprovals();
    if (fresh.length) this.notify(fresh);
  }

  waitingRequests() { return this.pending.filter((id) => this.requests.has(id)).map((id) => this.requests.get(id)); }

  renderApprovals() {
    const waiting = this.waitingRequests();
    for (const [id, card] of this.cards) card.waiting(waiting.some((r) => r.call_id === id));
    const bar = document.getElementById("approvals");
    const list = document.getElementById("approvals-list");
    const shownIds = [...list.children].map((n) => n.dataset.callId);
    for (const node of [...list.children]) if (!waiting.some((r) => r.call_id === node.dataset.callId)) node.remove();
    for (const request of waiting) if (!shownIds.includes(request.call_id)) list.append(this.approvalPrompt(request));
    document.getElementById("approvals-count").textContent =
      waiting.length === 1 ? "1 approval is waiting for you" : `${waiting.length} approvals are waiting for you`;
    const wasHidden = bar.hidden;
    bar.hidden = waiting.length === 0;
    document.body.classList.toggle("has-approvals", waiting.length > 0);
    document.body.dataset.pending = String(waiting.length);
    if (waiting.length && (wasHidden || !list.contains(document.activeElement))) {
      const first = list.querySelector("button.approve");
      if (first) first.focus({ preventScroll: true });
    }
    this.refreshTitle();
  }

  approvalPrompt(p) {
    const card = this.cards.get(p.call_id);
    const presentation = card ? card.presentation : "generic";
    const preview = presentation === "diff" ? diffBlock(p.preview) : outputBlock(p.preview, presentation);
    const reason = el("input", { placeholder: "reason (for a denial; the model sees it)", size: "40" });
    const error = el("span", { class: "error" });
    const answer = (decision, scope) => async () => {
      prompt.querySelectorAll("button").forEach((b) => { b.disabled = true; });
      try {
        await api("POST", `/api/approvals/${encodeURIComponent(p.call_id)}`,
          { decision, scope, reason: reason.value, session_id: this.id });
      } catch (err) {
        error.textContent = err.message;
        prompt.querySelectorAll("button").forEach((b) => { b.disabled = false; });
      }
    };
    const title = card && card.title ? ` ${card.title}` : "";
    const prompt = el("div", { class: "approval", "data-call-id": p.call_id },
      el("div", { class: "approval-title" }, `Approve this ${EFFECT_NAMES[p.effect] || p.effect} by `,
        el("span", { class: "tool" }, p.tool), title, p.paths && p.paths.length ? ` on ${p.paths.join(", ")}` : "", "?"),
      preview,
      el("div", { class: "row" },
        el("button", { class: "approve", onclick: answer("allow", "once") }, "Approve"),
        el("button", { class: "approve-session secondary", onclick: answer("allow", "session") }, "Allow for this session"),
        el("button", { class: "deny danger", onclick: answer("deny", "once") }, "Deny"), reason, error));
    return prompt;
  }

  refreshTitle() {
    const count = this.waitingRequests().length;
    document.title = count ? `(${count}) approval needed · ${this.title} · ProtoAgent` : `${this.title} · ProtoAgent`;
  }

  notify(fresh) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    for (const id of fresh) {
      const request = this.requests.get(id);
      if (!request) continue;
      try {
        new Notification("ProtoAgent: approval needed", { body: `${request.tool}: ${oneLine(request.preview, 100)}`, tag: id });
        document.body.dataset.notified = String(Number(document.body.dataset.notified || 0) + 1);
      } catch (err) { /* a browser without page notifications: the bar and the title still say it */ }
    }
  }

  // While the run goes on, each running command's output is read from the server and shown.
  pollLive() {
    if (this.polling || !this.running) return;
    const live = [...this.cards.values()].filter((c) => c.live && !c.ended);
    if (!live.length) return;
    this.polling = true;
    Promise.all(live.map(async (card) => {
      const read = await api("GET", `${this.base}/calls/${encodeURIComponent(card.callId)}/output?after=${card.liveNext}`);
      if (card.ended) return;
      card.appendLive(read.text);
      card.liveNext = read.next;
    })).catch(() => {}).finally(() => {
      this.polling = false;
      setTimeout(() => this.pollLive(), LIVE_POLL_MS);
    });
  }
}

function changesOpen() { return !document.getElementById("changes").hidden; }

async function showChanges(view) {
  const box = document.getElementById("changes");
  try {
    const found = await api("GET", `${view.base}/changes`);
    const files = el("ul", { class: "changed-files" });
    for (const f of found.files) {
      files.append(el("li", { class: `changed ${f.status}` }, el("span", { class: "path" }, f.path), ` ${f.status}`,
        el("span", { class: "who" }, ` turn ${f.turns.join(", ")}`)));
    }
    const summary = found.files.length ? `${found.files.length} file(s) changed in this session` : "this session changed no file";
    box.replaceChildren(el("h3", {}, summary), files, found.diff ? diffBlock(found.diff) : "");
  } catch (err) { box.replaceChildren(el("p", { class: "error" }, err.message)); }
}

function showTab(view, name) {
  for (const tab of document.querySelectorAll(".tabs button")) tab.classList.toggle("active", tab.dataset.tab === name);
  document.getElementById("transcript").hidden = name !== "transcript";
  document.getElementById("changes").hidden = name !== "changes";
  if (name === "changes") showChanges(view);
}

function openSession(sessionId) {
  document.getElementById("session-view").hidden = false;
  const view = new SessionView(sessionId);
  // The recorded log comes in one response; the stream then carries what is appended after it.
  api("GET", `${view.base}/events`).then((recorded) => {
    let last = 0;
    const live = view.transcript;
    view.transcript = document.createDocumentFragment();  // build detached, attach once
    view.replaying = true;  // which calls wait is the server's answer, rendered once below
    for (const event of recorded.events) { view.apply(event); last = event.seq; }
    view.replaying = false;
    live.append(view.transcript);
    view.transcript = live;
    document.body.dataset.lastSeq = String(last);  // the view now shows every recorded event
    view.setState(recorded);
    const source = new EventSource(`${view.base}/stream?after=${last}`);
    source.addEventListener("event", (message) => {
      const event = JSON.parse(message.data);
      view.apply(event);
      document.body.dataset.lastSeq = String(event.seq);
    });
    source.addEventListener("state", (message) => view.setState(JSON.parse(message.data)));
  }).catch((err) => { document.getElementById("continue-error").textContent = err.message; });
  for (const tab of document.querySelectorAll(".tabs button")) tab.addEventListener("click", () => showTab(view, tab.dataset.tab));
  document.getElementById("cancel").addEventListener("click", async () => {
    try { await api("POST", `${view.base}/cancel`); }
    catch (err) { document.getElementById("continue-error").textContent = err.message; }
  });
  document.getElementById("continue").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    askNotificationPermission();
    const text = submit.target.elements.text;
    try {
      await api("POST", `${view.base}/messages`, { text: text.value });
      text.value = "";
    } catch (err) { document.getElementById("continue-error").textContent = err.message; }
  });
}

const match = window.location.pathname.match(/^\/sessions\/([^/]+)$/);
if (match) openSession(decodeURIComponent(match[1]));
else if (window.location.pathname === "/settings") openSettings();
else openList();
