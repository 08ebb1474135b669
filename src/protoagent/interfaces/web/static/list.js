// The front page: a new run (with the repositories under the server's roots and known models to
// pick from) and the session list, refreshed while the page is open: status, repository, time
// and a badge for approvals waiting.
"use strict";

const LIST_REFRESH_MS = 2000;

function ago(seconds) {
  const delta = Math.max(0, Date.now() / 1000 - seconds);
  if (delta < 60) return "just now";
  if (delta < 3600) return `${Math.floor(delta / 60)} min ago`;
  if (delta < 86400) return `${Math.floor(delta / 3600)} h ago`;
  return new Date(seconds * 1000).toLocaleString();
}

function sessionRow(s) {
  const badge = s.pending ? el("span", { class: "badge pending", title: "approvals waiting" }, `${s.pending} approval${s.pending > 1 ? "s" : ""} waiting`) : "";
  return el("li", { "data-session-id": s.session_id, class: `session status-${s.status}` },
    el("a", { href: `/sessions/${encodeURIComponent(s.session_id)}` }, s.title || s.session_id),
    badge,
    el("span", { class: "status-label" }, s.status),
    el("span", { class: "repo", title: s.repo }, s.repo.split("/").slice(-2).join("/")),
    el("span", { class: "model" }, s.model),
    el("span", { class: "time", title: new Date(s.updated * 1000).toLocaleString() }, ago(s.updated)));
}

async function refreshList() {
  const list = document.getElementById("sessions");
  const sessions = await api("GET", "/api/sessions");
  sessions.sort((a, b) => b.updated - a.updated);
  list.replaceChildren(...sessions.map(sessionRow));
  const waiting = sessions.reduce((n, s) => n + s.pending, 0);
  document.title = waiting ? `(${waiting}) approval needed · ProtoAgent` : "ProtoAgent";
  document.body.dataset.listed = String(sessions.length);
}

function fillOptions(options) {
  const repos = document.getElementById("repo-options");
  repos.replaceChildren(...options.repos.map((r) => el("option", { value: r.value }, r.path)));
  const models = document.getElementById("model-options");
  models.replaceChildren(...options.models.map((m) => el("option", { value: m })));
}

async function openList() {
  document.getElementById("list-view").hidden = false;
  api("GET", "/api/options").then(fillOptions).catch((err) => { document.getElementById("run-error").textContent = err.message; });
  const tick = () => refreshList().catch((err) => { document.getElementById("list-error").textContent = err.message; })
    .finally(() => setTimeout(tick, LIST_REFRESH_MS));
  tick();
  document.getElementById("new-run").addEventListener("submit", async (submit) => {
    submit.preventDefault();
    askNotificationPermission();
    const form = Object.fromEntries(new FormData(submit.target).entries());
    if (!form.mode) delete form.mode;
    try {
      const { session_id } = await api("POST", "/api/runs", form);
      window.location.assign(`/sessions/${encodeURIComponent(session_id)}`);
    } catch (err) { document.getElementById("run-error").textContent = err.message; }
  });
}
