// The Settings page: agents (Form or Raw editor), skills (diagnostics and preferences per exact
// variant) and MCP servers, all over /api/settings. Nothing here decides trust: a repository
// agent's model stays ignored until `protoagent agents trust`, whatever is written.
"use strict";

const FORM_FIELDS = ["description", "model", "lead", "tools", "tools_opt_out", "skills", "mcp_servers"];
const LIST_FIELDS = new Set(["tools", "tools_opt_out", "skills", "mcp_servers"]);

function settingsRepo() { return document.getElementById("settings-repo").value || "."; }
function q(extra = "") { return `?repo=${encodeURIComponent(settingsRepo())}${extra}`; }
function settingsError(text) { document.getElementById("settings-error").textContent = text || ""; }

async function loadAgents() {
  const data = await api("GET", `/api/settings/agents${q()}`);
  const rows = document.getElementById("settings-agents");
  rows.replaceChildren();
  for (const agent of data.agents) {
    const [namespace, name] = agent.id.includes("/") ? agent.id.split("/") : ["work", agent.id];
    const edit = el("button", { type: "button", class: "secondary", onclick: () => openAgent(namespace, name) }, "Edit");
    rows.append(el("tr", { "data-agent": agent.id }, el("td", {}, agent.id), el("td", {}, agent.role),
      el("td", {}, agent.source), el("td", {}, agent.description || ""), el("td", {}, edit)));
  }
  const problems = document.getElementById("settings-agent-diagnostics");
  problems.replaceChildren(...data.diagnostics.map((d) => el("li", { class: d.severity }, d.problem)));
}

let editing = null;

async function openAgent(namespace, name) {
  settingsError("");
  const data = await api("GET", `/api/settings/agents/${namespace}/${name}${q()}`);
  editing = { namespace, name, data };
  const editor = document.getElementById("agent-editor");
  editor.hidden = false;
  document.getElementById("agent-editor-title").textContent = `${namespace}/${name} (${data.source})`;
  const form = document.getElementById("agent-form");
  form.replaceChildren();
  for (const field of [...FORM_FIELDS, "prompt"]) {
    const value = data.form[field];
    const shown = Array.isArray(value) ? value.join(", ") : (value ?? "");
    const input = field === "prompt" ? el("textarea", { name: field, rows: "4" }) : el("input", { name: field });
    input.value = shown;
    // What applies when the file leaves a field out (the code-owned profile's value): a hint only.
    const inherited = ["description", "model", "lead"].includes(field) && data.effective ? data.effective[field] : null;
    if (inherited) input.placeholder = String(inherited);
    if (LIST_FIELDS.has(field)) input.placeholder = field === "tools" ? "added to the built-in tools" : "comma-separated names";
    form.append(el("label", {}, field, input));
  }
  document.getElementById("agent-raw").value = data.raw ?? `---\nname: ${name}\n---\n`;
  document.getElementById("agent-scope").value = data.source === "project" ? "project" : "user";
  document.getElementById("agent-effective").textContent = JSON.stringify(data.effective, null, 2);
  document.getElementById("agent-problems").textContent = (data.problems || []).join("\n");
  document.getElementById("agent-delete").disabled = data.source === "builtin";
}

function agentMode() { return document.querySelector("input[name=agent-mode]:checked").value; }

function formChanges() {
  // Every field the file has goes back as it was (unknown ones too); edited ones replace it.
  const changes = { ...editing.data.form };
  for (const input of document.getElementById("agent-form").elements) {
    const before = editing.data.form[input.name];
    const text = input.value.trim();
    if (LIST_FIELDS.has(input.name)) {
      const list = text ? text.split(",").map((s) => s.trim()).filter(Boolean) : [];
      if (before !== undefined || list.length) changes[input.name] = list;
    } else if (text || before !== undefined) {
      changes[input.name] = input.name === "prompt" ? input.value : text;
    }
  }
  return changes;
}

async function saveAgent() {
  settingsError("");
  const scope = document.getElementById("agent-scope").value;
  const body = agentMode() === "raw" ? { raw: document.getElementById("agent-raw").value, scope } : { form: formChanges(), scope };
  try {
    await api("PUT", `/api/settings/agents/${editing.namespace}/${editing.name}${q()}`, body);
    await openAgent(editing.namespace, editing.name);
    await loadAgents();
    document.getElementById("agent-saved").textContent = "saved";
  } catch (err) { settingsError(err.message); }
}

async function deleteAgent() {
  try {
    await api("DELETE", `/api/settings/agents/${editing.namespace}/${editing.name}${q()}`);
    document.getElementById("agent-editor").hidden = true;
    await loadAgents();
  } catch (err) { settingsError(err.message); }
}

async function loadSkills() {
  const data = await api("GET", `/api/settings/skills${q()}`);
  const rows = document.getElementById("settings-skills");
  rows.replaceChildren();
  for (const skill of data.skills) {
    const box = (label, checked, change) => {
      const input = el("input", { type: "checkbox", "aria-label": `${skill.name} ${label}` });
      input.checked = checked;
      input.addEventListener("change", () => setSkill(skill, change(input.checked)));
      return el("td", {}, input);
    };
    const modes = (mode, on) => ({ modes: ["work", "coding"].filter((m) => (m === mode ? on : skill.preferences.modes.includes(m))) });
    const reset = el("button", { type: "button", class: "secondary", onclick: () => resetSkill(skill) }, "Reset");
    rows.append(el("tr", { "data-skill": skill.name }, el("td", {}, skill.name), el("td", {}, skill.source),
      el("td", { class: skill.valid ? "yes" : "no" }, skill.valid ? "valid" : "invalid"),
      box("work", skill.availability.work, (on) => modes("work", on)),
      box("coding", skill.availability.coding, (on) => modes("coding", on)),
      box("implicit", skill.preferences.implicit, (on) => ({ implicit: on })),
      box("manual", skill.preferences.manual, (on) => ({ manual: on })),
      el("td", {}, reset)));
  }
  const problems = document.getElementById("settings-skill-diagnostics");
  problems.replaceChildren(...data.diagnostics.map((d) => el("li", { class: d.severity }, `${d.path}: ${d.problem}`)));
}

async function setSkill(skill, change) {
  settingsError("");
  try { await api("PUT", `/api/settings/skills/${skill.name}/preferences${q()}`, { ...change, identity: skill.identity }); }
  catch (err) { settingsError(err.message); }
  await loadSkills();
}

async function resetSkill(skill) {
  try { await api("POST", `/api/settings/skills/${skill.name}/reset${q()}`, { identity: skill.identity }); }
  catch (err) { settingsError(err.message); }
  await loadSkills();
}

async function loadMcp() {
  const data = await api("GET", `/api/settings/mcp${q()}`);
  const rows = document.getElementById("settings-mcp");
  rows.replaceChildren();
  for (const server of data.servers) {
    const scope = server.origin === "project" ? "&scope=project" : "";
    const act = (label, method, path) => el("button", { type: "button", class: "secondary", onclick: async () => {
      try { await api(method, `/api/settings/mcp/${server.name}${path}${q(scope)}`); } catch (err) { settingsError(err.message); }
      await loadMcp();
    } }, label);
    const toggle = server.status === "disabled" ? act("Enable", "POST", "/enable") : act("Disable", "POST", "/disable");
    rows.append(el("tr", { "data-mcp": server.name }, el("td", {}, server.name), el("td", {}, server.status),
      el("td", {}, `${server.transport} ${server.target}`), el("td", {}, server.origin), el("td", {}, toggle, act("Remove", "DELETE", ""))));
  }
}

async function addMcp(submit) {
  submit.preventDefault();
  settingsError("");
  const form = submit.target.elements;
  const target = form.target.value.trim();
  const body = /^https?:\/\//.test(target) ? { name: form.name.value.trim(), url: target } : { name: form.name.value.trim(), command: target.split(/\s+/) };
  try { await api("POST", `/api/settings/mcp${q()}`, body); submit.target.reset(); } catch (err) { settingsError(err.message); }
  await loadMcp();
}

async function loadSettings() {
  settingsError("");
  try { await Promise.all([loadAgents(), loadSkills(), loadMcp()]); }
  catch (err) { settingsError(err.message); }
  document.body.dataset.settingsLoaded = "1";
}

function openSettings() {
  document.getElementById("settings-view").hidden = false;
  document.getElementById("title").textContent = "Settings";
  document.getElementById("settings-reload").addEventListener("click", loadSettings);
  document.getElementById("agent-save").addEventListener("click", saveAgent);
  document.getElementById("agent-delete").addEventListener("click", deleteAgent);
  document.getElementById("mcp-add").addEventListener("submit", addMcp);
  document.getElementById("agent-form").addEventListener("submit", (submit) => submit.preventDefault());
  for (const radio of document.querySelectorAll("input[name=agent-mode]")) {
    radio.addEventListener("change", () => {
      document.getElementById("agent-form").hidden = agentMode() !== "form";
      document.getElementById("agent-raw").hidden = agentMode() !== "raw";
    });
  }
  loadSettings();
}
