"""The settings API over a real server: agents, skills and MCP servers, as the CLI manages them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from tests.skills.support import simple
from tests.web.support import running_server

from protoagent.testing import make_repo

AGENT = (
    "---\n"
    "# my reviewer, keep this comment\n"
    "name: reviewer\n"
    "description: Reviews drafts\n"
    "x-team: docs   # unknown field with a comment\n"
    "tools: [read_file]\n"
    "---\n"
    "Review carefully.\n"
)


def tree_hash(*roots: Path) -> str:
    """Every path, mode, mtime and byte under ``roots``: any created or changed file changes it."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            stat = path.lstat()
            digest.update(f"{path}|{stat.st_mode}|{stat.st_mtime_ns}".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def repo_with_agents(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    simple(repo / ".agents/skills", "tidy", "Use when tidying.")
    return repo


def test_get_routes_create_or_change_no_file_in_the_home_or_the_repository(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        home = tmp_path / ".home"
        home.mkdir(exist_ok=True)
        (home / "agents").mkdir()
        (home / "agents" / "reviewer.md").write_text(AGENT)
        before = tree_hash(home, repo)
        for url in (
            "/api/settings/agents?repo=repo",
            "/api/settings/agents?repo=repo&mode=coding",
            "/api/settings/agents/work/reviewer?repo=repo",
            "/api/settings/agents/coding/architect?repo=repo",
            "/api/settings/agents/work/assistant?repo=repo",
            "/api/settings/skills?repo=repo",
            "/api/settings/skills?repo=repo&mode=work",
            "/api/settings/skills/tidy?repo=repo",
            "/api/settings/mcp?repo=repo",
        ):
            response = client.get(url)
            assert response.status_code == 200, (url, response.text)
        assert tree_hash(home, repo) == before
        # Nothing is materialised: the built-in agents have no files, before or after.
        assert not (repo / ".protoagent").exists()
        assert sorted(p.name for p in (home / "agents").iterdir()) == ["reviewer.md"]


def test_agent_list_and_get_follow_the_contract(tmp_path: Path) -> None:
    repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        listing = client.get("/api/settings/agents?repo=repo").json()
        assert {"agents", "diagnostics"} <= set(listing)
        architect = next(a for a in listing["agents"] if a["id"] == "coding/architect")
        assert architect["role"] == "lead" and architect["source"] == "builtin"
        got = client.get("/api/settings/agents/coding/architect?repo=repo").json()
        assert got["raw"] is None and got["form"] == {} and got["effective"]["id"] == "coding/architect"
        assert client.get("/api/settings/agents/space/architect?repo=repo").status_code == 400
        assert client.get("/api/settings/agents/work/nobody?repo=repo").status_code == 400


def test_a_form_edit_keeps_unknown_fields_and_comments_byte_for_byte(tmp_path: Path) -> None:
    repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        put = client.put("/api/settings/agents/work/reviewer?repo=repo", json={"raw": AGENT, "scope": "user"})
        assert put.status_code == 200, put.text
        path = tmp_path / ".home/agents/reviewer.md"
        assert path.read_text() == AGENT
        got = client.get("/api/settings/agents/work/reviewer?repo=repo").json()
        assert got["form"]["x-team"] == "docs" and got["form"]["prompt"] == "Review carefully."
        form = {**got["form"], "description": "Reviews drafts and specs"}
        edited = client.put("/api/settings/agents/work/reviewer?repo=repo", json={"form": form, "scope": "user"})
        assert edited.status_code == 200, edited.text
        assert path.read_text() == AGENT.replace("Reviews drafts\n", "Reviews drafts and specs\n")
        assert edited.json()["effective"]["description"] == "Reviews drafts and specs"


def test_a_put_is_validated_with_the_namespace_mode_and_a_bad_one_writes_nothing(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        wrong_mode = AGENT.replace("name: reviewer\n", "name: reviewer\nmode: coding\n")
        refused = client.put("/api/settings/agents/work/reviewer?repo=repo", json={"raw": wrong_mode})
        assert refused.status_code == 400 and "does not match its folder" in refused.json()["error"]
        renamed = client.put("/api/settings/agents/coding/other?repo=repo", json={"raw": AGENT, "scope": "project"})
        assert renamed.status_code == 400 and "differs from the file name" in renamed.json()["error"]
        role = client.put("/api/settings/agents/coding/architect?repo=repo", json={"form": {"role": "member"}})
        assert role.status_code == 400 and "built-in lead" in role.json()["error"]
        escape = client.put("/api/settings/agents/work/..%2Fx?repo=repo", json={"raw": AGENT})
        assert escape.status_code in (400, 404)
        assert not (repo / ".protoagent").exists() and not (tmp_path / ".home/agents").exists()


def test_the_effective_config_the_api_returns_is_the_one_the_runtime_compiles(tmp_path: Path) -> None:
    repo_with_agents(tmp_path)
    coder = "---\nname: coder\ntools_opt_out: [create_file]\nskills: [tidy]\n---\nPrefer tiny diffs.\n"
    with running_server(tmp_path) as server, server.client() as client:
        put = client.put("/api/settings/agents/coding/coder?repo=repo", json={"raw": coder})
        assert put.status_code == 200, put.text
        effective = client.get("/api/settings/agents/coding/coder?repo=repo").json()["effective"]
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / ".home")}
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "protoagent",
            "agents",
            "show",
            "coding/coder",
            "--repo",
            str(tmp_path / "repo"),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(shown.stdout) == effective
    assert "create_file" not in effective["tools"] and effective["prompt"].endswith("Prefer tiny diffs.")


def test_a_project_put_of_a_model_does_not_widen_the_repository_agent_until_trusted(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    text = "---\nname: coder\nmodel: openai:gpt-4.1\ntools: [run_shell]\n---\n"
    with running_server(tmp_path) as server, server.client() as client:
        put = client.put("/api/settings/agents/coding/coder?repo=repo", json={"raw": text, "scope": "project"})
        assert put.status_code == 200, put.text
        assert (repo / ".protoagent/agents/coding/coder.md").read_text() == text
        effective = put.json()["effective"]
        assert effective["model"] is None and "run_shell" not in effective["tools"] and effective["ignored"]
        assert not (tmp_path / ".home/agent-trust.json").exists()


def test_delete_removes_a_user_or_project_file_and_never_a_built_in(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        assert client.delete("/api/settings/agents/coding/architect?repo=repo").status_code == 400
        client.put("/api/settings/agents/work/reviewer?repo=repo", json={"raw": AGENT, "scope": "project"})
        assert (repo / ".protoagent/agents/reviewer.md").exists()
        gone = client.delete("/api/settings/agents/work/reviewer?repo=repo")
        assert gone.status_code == 200 and gone.json()["scope"] == "project"
        assert not (repo / ".protoagent/agents/reviewer.md").exists()
        assert client.get("/api/settings/agents/work/reviewer?repo=repo").status_code == 400


def test_agent_writes_never_follow_a_repository_link_out_of_it(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".protoagent").mkdir()
    os.symlink(outside, repo / ".protoagent/agents")
    with running_server(tmp_path) as server, server.client() as client:
        put = client.put("/api/settings/agents/work/reviewer?repo=repo", json={"raw": AGENT, "scope": "project"})
        assert put.status_code == 400 and "outside" in put.json()["error"]
        assert list(outside.iterdir()) == []


def test_settings_routes_need_the_token_and_refuse_other_origins(tmp_path: Path) -> None:
    repo_with_agents(tmp_path)
    with running_server(tmp_path) as server:
        with server.client(token="") as anonymous:
            assert anonymous.get("/api/settings/agents?repo=repo").status_code == 401
            put = anonymous.put("/api/settings/agents/work/reviewer?repo=repo", json={"raw": AGENT})
            assert put.status_code == 401
        with server.client() as client:
            foreign = client.put(
                "/api/settings/agents/work/reviewer?repo=repo",
                json={"raw": AGENT},
                headers={"Origin": "http://evil.example"},
            )
            assert foreign.status_code == 403
            assert client.get(f"/api/settings/agents?repo={tmp_path.parent}").status_code == 400
        assert not (tmp_path / ".home/agents").exists()


def skill_row(client: httpx.Client, name: str, mode: str | None = None) -> dict[str, object]:
    query = f"?repo=repo&mode={mode}" if mode else "?repo=repo"
    rows = client.get(f"/api/settings/skills{query}").json()["skills"]
    return next(r for r in rows if r["name"] == name)


def test_skill_preferences_are_keyed_by_the_exact_variant_and_never_touch_the_bundle(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    other = make_repo(tmp_path / "other", {"README.md": "x\n"})
    simple(other / ".agents/skills", "tidy", "Other tidy.")
    bundle = repo / ".agents/skills/tidy/SKILL.md"
    before = bundle.read_bytes()
    with running_server(tmp_path) as server, server.client() as client:
        row = skill_row(client, "tidy")
        changed = client.put(
            "/api/settings/skills/tidy/preferences?repo=repo", json={"modes": ["work"], "manual": False}
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["availability"] == {"work": True, "coding": False} and changed.json()["manual"] is False
        assert bundle.read_bytes() == before
        store = json.loads((tmp_path / ".home/skill-settings.json").read_text())
        assert list(store["skills"]) == [row["identity"]]
        untouched = client.get("/api/settings/skills/tidy?repo=other").json()
        assert untouched["identity"] != row["identity"] and untouched["availability"]["coding"] is True
        coding = client.get("/api/settings/skills?repo=repo&mode=coding").json()["skills"]
        assert "tidy" not in [r["name"] for r in coding]
        reset = client.post("/api/settings/skills/tidy/reset?repo=repo", json={})
        assert reset.json()["availability"] == {"work": True, "coding": True} and reset.json()["manual"] is True
        assert json.loads((tmp_path / ".home/skill-settings.json").read_text())["skills"] == {}
        wrong = client.put("/api/settings/skills/tidy/preferences?repo=repo", json={"identity": "nope", "manual": True})
        assert wrong.status_code == 400


def test_an_invalid_winning_skill_is_listed_with_its_diagnostics_so_it_can_be_repaired(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    broken = repo / ".agents/skills/tidy/SKILL.md"
    broken.write_text("---\nname: tidy\n---\nno description\n")
    with running_server(tmp_path) as server, server.client() as client:
        row = skill_row(client, "tidy")
        assert row["valid"] is False
        detail = client.get("/api/settings/skills/tidy?repo=repo").json()
        assert detail["diagnostics"] and detail["editable"] is True
        fixed = "---\nname: tidy\ndescription: Use when tidying.\n---\nSteps.\n"
        repaired = client.put("/api/settings/skills/tidy/content?repo=repo", json={"text": fixed})
        assert repaired.status_code == 200, repaired.text
        assert repaired.json()["valid"] is True and broken.read_text() == fixed


def test_built_in_and_symlinked_bundles_refuse_content_update_and_delete(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    shared = simple(repo / "shared", "linked", "Use when linked.")
    os.symlink(shared, repo / ".agents/skills/linked")
    before = (shared / "SKILL.md").read_bytes()
    with running_server(tmp_path) as server, server.client() as client:
        builtin = next(
            r for r in client.get("/api/settings/skills?repo=repo").json()["skills"] if r["source"] == "bundled"
        )
        for name in ("linked", builtin["name"]):
            text = f"---\nname: {name}\ndescription: Use when replaced.\n---\nreplaced\n"
            update = client.put(f"/api/settings/skills/{name}/content?repo=repo", json={"text": text})
            assert update.status_code == 400 and "read-only" in update.json()["error"], update.text
            delete = client.delete(f"/api/settings/skills/{name}?repo=repo")
            assert delete.status_code == 400 and "read-only" in delete.json()["error"]
        assert (shared / "SKILL.md").read_bytes() == before and (repo / ".agents/skills/linked").is_symlink()
        prefs = client.put("/api/settings/skills/linked/preferences?repo=repo", json={"implicit": False})
        assert prefs.status_code == 200 and prefs.json()["preferences"]["implicit"] is False


def test_mcp_servers_are_added_disabled_enabled_and_removed_as_the_cli_does(tmp_path: Path) -> None:
    repo = repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        body = {"name": "time", "command": ["mcp-server-time", "--local"], "env": ["TZ=UTC"]}
        assert client.post("/api/settings/mcp?repo=repo", json=body).status_code == 200
        user_file = tmp_path / ".home/mcp.json"
        servers = json.loads(user_file.read_text())["mcpServers"]
        assert servers["time"] == {"command": "mcp-server-time", "args": ["--local"], "env": {"TZ": "UTC"}}
        rows = client.get("/api/settings/mcp?repo=repo").json()["servers"]
        assert [(r["name"], r["status"]) for r in rows] == [("time", "enabled")]
        assert client.post("/api/settings/mcp/time/disable?repo=repo").status_code == 200
        assert client.get("/api/settings/mcp?repo=repo").json()["servers"][0]["status"] == "disabled"
        assert client.post("/api/settings/mcp/time/enable?repo=repo").status_code == 200
        trusted = client.post("/api/settings/mcp?repo=repo", json={**body, "trusted": True, "scope": "project"})
        assert trusted.status_code == 400 and "cannot trust" in trusted.json()["error"]
        assert not (repo / ".mcp.json").exists()
        assert client.delete("/api/settings/mcp/time?repo=repo").status_code == 200
        assert client.get("/api/settings/mcp?repo=repo").json()["servers"] == []


def test_a_run_uses_exactly_the_effective_config_the_api_returned(tmp_path: Path) -> None:
    from tests.app.support import say, scripted_run

    repo_with_agents(tmp_path)
    editor = (
        "---\nname: editor\nrole: lead\ndescription: edits prose\ntools_opt_out: [shell]\n---\n"
        "Prefer short sentences.\n"
    )
    with running_server(tmp_path) as server, server.client() as client:
        put = client.put("/api/settings/agents/work/editor?repo=repo", json={"raw": editor})
        assert put.status_code == 200, put.text
        effective = client.get("/api/settings/agents/work/editor?repo=repo").json()["effective"]
    unused = tmp_path / "unused"
    unused.mkdir()
    home = tmp_path / ".home"
    _, _, model, _ = scripted_run(
        "tidy the draft", [say("Done.", "editor")], repo=unused, home=home, mode="work", agent="editor"
    )
    request = next(r for r in model.requests if r.agent_role == "editor")
    assert request.system == effective["prompt"]
    assert [t.name for t in request.tools] == effective["tools"] and "shell" not in effective["tools"]


def test_a_form_edit_of_a_built_in_agent_writes_only_the_fields_given(tmp_path: Path) -> None:
    repo_with_agents(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        put = client.put("/api/settings/agents/coding/coder?repo=repo", json={"form": {"model": "openai:gpt-4.1"}})
        assert put.status_code == 200, put.text
        written = (tmp_path / ".home/agents/coding/coder.md").read_text()
        assert written == "---\nname: coder\nmodel: openai:gpt-4.1\n---\n"  # no copy of the code-owned tools or prompt
        effective = put.json()["effective"]
        assert effective["model"] == "openai:gpt-4.1" and "edit_file" in effective["tools"]


def test_administrator_bundles_refuse_content_edits_but_take_preferences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo_with_agents(tmp_path)
    admin = tmp_path / "admin-skills"
    simple(admin, "policy", "Use when following house rules.")
    monkeypatch.setenv("PROTOAGENT_ADMIN_SKILLS", str(admin))
    before = (admin / "policy/SKILL.md").read_bytes()
    with running_server(tmp_path) as server, server.client() as client:
        assert skill_row(client, "policy")["source"] == "admin"
        text = "---\nname: policy\ndescription: Use when replaced.\n---\nreplaced\n"
        update = client.put("/api/settings/skills/policy/content?repo=repo", json={"text": text})
        assert update.status_code == 400 and "administrator bundle" in update.json()["error"]
        assert client.delete("/api/settings/skills/policy?repo=repo").status_code == 400
        prefs = client.put("/api/settings/skills/policy/preferences?repo=repo", json={"modes": ["coding"]})
        assert prefs.status_code == 200 and prefs.json()["availability"] == {"work": False, "coding": True}
    assert (admin / "policy/SKILL.md").read_bytes() == before
