// Checkpoints on the session page: after each user turn (and before the first) a bar offers to
// rewind the code, the conversation or both to that point, or to fork a new session from it.
// Each action asks for a confirmation first; a refusal lists the files that blocked it (nothing
// changed then); a rewind reloads the page, which shows the rewound state from the log.
"use strict";

const REWIND_SCOPES = {
  code: (n) => `Put back every file this session wrote as it was ${checkpointName(n)}? ` +
    "A file changed outside the session since is never overwritten: the rewind is refused instead.",
  conversation: (n) => `Hide the turns after ${checkpointName(n)} from the model? The log keeps them; files stay as they are.`,
  both: (n) => `Put back the files as they were ${checkpointName(n)} and hide the later turns from the model? ` +
    "A file changed outside the session since is never overwritten: the rewind is refused instead.",
};

function checkpointName(n) { return n ? `after turn ${n}` : "before the first turn"; }

function checkpointBar(view, turn) {
  const question = el("span", { class: "question" });
  const problem = el("div", { class: "error" });
  const confirmBox = el("div", { class: "confirm" });
  confirmBox.hidden = true;
  const bar = el("div", { class: "checkpoint", "data-checkpoint": String(turn) },
    el("span", { class: "label" }, `checkpoint ${checkpointName(turn)}`));
  const actions = el("span", { class: "actions" });
  let pending = null;
  const ask = (action, text) => () => {
    pending = action;
    question.textContent = text;
    problem.replaceChildren();
    confirmBox.hidden = false;
  };
  for (const scope of Object.keys(REWIND_SCOPES)) {
    actions.append(el("button", { type: "button", class: `secondary rewind-${scope}`,
      onclick: ask(() => rewindTo(view, turn, scope), REWIND_SCOPES[scope](turn)) }, `Rewind ${scope}`));
  }
  if (turn > 0) {
    const forkText = `Start a new session from the state ${checkpointName(turn)}? This session stays as it is.`;
    actions.append(el("button", { type: "button", class: "secondary fork", onclick: ask(() => forkAt(view, turn), forkText) },
      "Fork from here"));
  }
  const go = el("button", { type: "button", class: "confirm-yes danger" }, "Confirm");
  const cancel = el("button", { type: "button", class: "confirm-no secondary" }, "Cancel");
  go.addEventListener("click", async () => {
    if (!pending) return;
    go.disabled = true;
    try { await pending(); }
    catch (err) { problem.replaceChildren(...refusalNodes(err)); }
    finally { go.disabled = false; confirmBox.hidden = true; pending = null; }
  });
  cancel.addEventListener("click", () => { confirmBox.hidden = true; pending = null; });
  confirmBox.append(question, go, cancel);
  bar.append(actions, confirmBox, problem);
  return bar;
}

async function rewindTo(view, turn, scope) {
  await api("POST", `${view.base}/rewind`, { to: turn, scope });
  window.location.reload();  // the page is rebuilt from the log, the rewind's event included
}

async function forkAt(view, turn) {
  const forked = await api("POST", `${view.base}/fork`, { to: turn });
  window.location.assign(`/sessions/${encodeURIComponent(forked.session_id)}`);
}

// A refusal's message and, when the server named them, the files that blocked it.
function refusalNodes(err) {
  const nodes = [el("div", { class: "refusal" }, err.message)];
  const conflicts = err.data && Array.isArray(err.data.conflicts) ? err.data.conflicts : [];
  if (conflicts.length) {
    const list = el("ul", { class: "conflicts" });
    for (const c of conflicts) list.append(el("li", {}, el("span", { class: "path" }, c.path), ` ${c.why}`));
    nodes.push(list);
  }
  return nodes;
}

// What a recorded rewind did, from its event: restored and removed files, hidden turns, and the
// commands whose side effects a checkpoint does not track.
function rewindNote(p) {
  const note = el("div", { class: "notice rewind-note" }, `rewound to ${checkpointName(p.to_turn)} (${p.scope})`);
  const restored = p.restored.filter((r) => r.text !== null).map((r) => r.path);
  const removed = p.restored.filter((r) => r.text === null).map((r) => r.path);
  if (p.scope !== "conversation") {
    note.append(el("div", {}, `restored: ${restored.join(", ") || "nothing"}${removed.length ? `; removed: ${removed.join(", ")}` : ""}`));
  }
  if (p.hidden_turns.length) note.append(el("div", {}, `the model no longer sees turns ${p.hidden_turns.join(", ")} (the log keeps them)`));
  if (p.commands_since.length) {
    note.append(el("div", {}, "commands ran since the checkpoint; their side effects are not rewound: " + p.commands_since.join("; ")));
  }
  if (p.command_changed_files.length) note.append(el("div", {}, `files those commands changed: ${p.command_changed_files.join(", ")}`));
  return note;
}
