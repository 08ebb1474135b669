"""``protoagent batch --format swe-bench`` as a user drives it: SWE-bench-format instances over two
local clones, predictions the official harness reads, and local evaluation."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from protoagent.testing import make_repo, tool_turn, write_script
from protoagent.testing.postgres import missing_reason, temporary_postgres

EXE = [sys.executable, "-m", "protoagent"]
GIT_ID = ["-c", "user.name=ProtoAgent Tests", "-c", "user.email=tests@protoagent.invalid"]

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.xdist_group("ray"),  # Ray workers are found by name: one Ray test at a time
]

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC_TESTS = "from calc import add, sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
ADD_TEST = "\n\ndef test_add():\n    assert add(2, 2) == 4\n"
WORDS = "def shout(text):\n    return text\n"
WORDS_TESTS = "from words import shout\n\n\ndef test_empty():\n    assert shout('') == ''\n"
SHOUT_TEST = "\n\ndef test_shout():\n    assert shout('hi') == 'HI'\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@dataclass(frozen=True)
class Fixture:
    instances: Path
    repos: Path
    model: str
    base: dict[str, str]


def _clone(repos: Path, name: str, files: dict[str, str], test_file: str, added_test: str) -> tuple[str, str]:
    """A clone in the datasets' layout with a base commit, a later commit, and a test patch."""
    repo = make_repo(repos / name, files)
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "LATER.md").write_text("a commit after the base\n")
    git(repo, "add", "LATER.md")
    git(repo, "commit", "-qm", "later")
    with open(repo / test_file, "a", encoding="utf-8") as handle:
        handle.write(added_test)
    test_patch = git(repo, "diff")
    git(repo, "checkout", "--", test_file)
    return base, test_patch


def _instance(instance_id: str, repo: str, base: str, test_patch: str, f2p: list[str], p2p: list[str]) -> str:
    return json.dumps(
        {
            "instance_id": instance_id,
            "repo": repo,
            "base_commit": base,
            "problem_statement": f"{instance_id}: the function is wrong",
            "hints_text": "",
            "test_patch": test_patch,
            # The public datasets store these as JSON-encoded strings; a plain list is read too.
            "FAIL_TO_PASS": json.dumps(f2p),
            "PASS_TO_PASS": p2p,
            "version": "1.0",
            "created_at": "2024-01-01T00:00:00Z",
        }
    )


def _own_environment(repo: Path, *, borrow: bool = True) -> Path:
    """A virtual environment in ``repo``; ``borrow``: its packages are this interpreter's (pytest)."""
    venv = repo / ".venv"
    (venv / "bin").mkdir(parents=True)
    base = os.path.realpath(sys.executable)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(base).parent}\ninclude-system-site-packages = false\n")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    site.mkdir(parents=True)
    if borrow:
        (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    os.symlink(base, venv / "bin" / "python")
    return venv / "bin" / "python"


@pytest.fixture
def suite(tmp_path: Path) -> Fixture:
    return _make_suite(tmp_path)


def _make_suite(tmp_path: Path) -> Fixture:
    """Two instances' clones under ``tmp_path``, their instances file and one scripted model."""
    repos = tmp_path / "repos"
    calc_base, calc_patch = _clone(
        repos, "acme__calc", {"calc.py": CALC, "test_calc.py": CALC_TESTS}, "test_calc.py", ADD_TEST
    )
    words_files = {"words.py": WORDS, "test_words.py": WORDS_TESTS, "NOTES.md": "words\n"}
    words_base, words_patch = _clone(repos, "acme__words", words_files, "test_words.py", SHOUT_TEST)
    _own_environment(repos / "acme__calc")
    # A hook in the user's clone must never run in the task's copy.
    hook = repos / "acme__words" / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path / 'hook-ran'}\n")
    hook.chmod(0o755)
    lines = [
        _instance(
            "acme__calc-1", "acme/calc", calc_base, calc_patch, ["test_calc.py::test_add"], ["test_calc.py::test_sub"]
        ),
        _instance(
            "acme__words-1",
            "acme/words",
            words_base,
            words_patch,
            ["test_words.py::test_shout"],
            ["test_words.py::test_empty"],
        ),
    ]
    instances = tmp_path / "instances.jsonl"
    instances.write_text("\n".join(lines) + "\n")
    revision = hashlib.sha256(CALC.encode()).hexdigest()
    # One model for both: its edits fit acme/calc only, so on acme/words every one is refused.
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("coder", role="architect", task="make add() add"),
            tool_turn(
                "edit_file",
                role="coder",
                path="calc.py",
                old="    return a - b\n\n\ndef sub",
                new="    return a + b\n\n\ndef sub",
                expected_revision=revision,
            ),
            tool_turn("create_file", role="coder", path="NOTES.md", content="add() adds now\n"),
            tool_turn("report_task", role="coder", status="done", summary="add() adds"),
            {"role": "coder", "text": "fixed"},
            {"role": "architect", "text": "Fixed add()."},
            tool_turn("review_criteria", role="architect", met=[1]),
            {"role": "architect", "text": "add() adds; the checks pass."},
        ],
    )
    return Fixture(instances, repos, f"scripted:{script}", {"acme__calc-1": calc_base, "acme__words-1": words_base})


def swe_batch(
    home: Path, fixture: Fixture, out: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PROTOAGENT_STORE", "VIRTUAL_ENV")} if env is None else env
    command = [*EXE, "batch", "--format", "swe-bench", str(fixture.instances), "--repos", str(fixture.repos)]
    command += ["--model", fixture.model, "--out", str(out), *args]
    full_env = {**base, "PROTOAGENT_HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def read_jsonl(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["instance_id"]: r for r in rows}


def applies_at_base(fixture: Fixture, instance_id: str, patch: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    copy = tmp_path / f"check-{instance_id}"
    subprocess.run(["git", "clone", "-q", str(fixture.repos / instance_id.split("-")[0]), str(copy)], check=True)
    git(copy, "checkout", "-q", fixture.base[instance_id])
    return subprocess.run(["git", "apply", "--check", "-"], cwd=copy, input=patch, capture_output=True, text=True)


@dataclass(frozen=True)
class Predicted:
    """One local predictions run (no evaluation) of an unchanged suite: the tests that only read
    such a run share it."""

    suite: Fixture
    tmp: Path
    done: subprocess.CompletedProcess[str]

    @property
    def out(self) -> Path:
        return self.tmp / "out"


NAMED = ("--workers", "2", "--model-name", "proto-scripted")


@pytest.fixture(scope="module")
def predicted(tmp_path_factory: pytest.TempPathFactory) -> Predicted:
    tmp = tmp_path_factory.mktemp("predicted")
    suite = _make_suite(tmp)
    return Predicted(suite, tmp, swe_batch(tmp / "home", suite, tmp / "out", *NAMED))


def test_predictions_hold_the_fix_as_git_diff_at_base_commit_and_nothing_for_the_untouched_instance(
    tmp_path: Path, predicted: Predicted
) -> None:
    suite, done = predicted.suite, predicted.done
    assert done.returncode == 0, done.stderr + done.stdout
    preds = read_jsonl(predicted.out / "preds.jsonl")
    assert list(preds) == ["acme__calc-1", "acme__words-1"]
    assert {tuple(sorted(p)) for p in preds.values()} == {("instance_id", "model_name_or_path", "model_patch")}
    assert {p["model_name_or_path"] for p in preds.values()} == {"proto-scripted"}
    fix = preds["acme__calc-1"]["model_patch"]
    assert "+    return a + b" in fix and "diff --git a/NOTES.md b/NOTES.md\nnew file mode" in fix
    assert ".protoagent" not in fix and "LATER.md" not in fix and ".venv" not in fix
    checked = applies_at_base(suite, "acme__calc-1", fix, tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert preds["acme__words-1"]["model_patch"] == ""
    assert not (predicted.tmp / "hook-ran").exists(), "a hook of the user's clone ran"
    assert (suite.repos / "acme__calc" / "calc.py").read_text() == CALC
    rows = read_jsonl(predicted.out / "results.jsonl")
    assert rows["acme__calc-1"]["resolved"] is None and rows["acme__calc-1"]["applied"] is True
    summary = json.loads((predicted.out / "summary.json").read_text())
    assert summary["total"] == 2 and summary["resolved_rate"] is None


def show_session(home: Path, session_id: str) -> str:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    env.pop("PROTOAGENT_STORE", None)
    command = [*EXE, "sessions", "show", session_id, "--json"]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=120).stdout


def rewrite_instance(suite: Fixture, index: int, **fields: Any) -> None:
    lines = suite.instances.read_text().splitlines()
    lines[index] = json.dumps({**json.loads(lines[index]), **fields})
    suite.instances.write_text("\n".join(lines) + "\n")


def new_test_patch(suite: Fixture, clone: str, test_file: str, added: str) -> str:
    """A test patch made on the user's clone (its test file is the same at base and HEAD)."""
    repo = suite.repos / clone
    with open(repo / test_file, "a", encoding="utf-8") as handle:
        handle.write(added)
    patch = git(repo, "diff")
    git(repo, "checkout", "--", test_file)
    return patch


def test_evaluate_marks_the_fixed_instance_resolved_and_the_untouched_one_not(tmp_path: Path, suite: Fixture) -> None:
    rewrite_instance(suite, 0, hints_text="the plus sign went missing")
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out", "--workers", "2", "--evaluate", "--hints")
    assert done.returncode == 0, done.stderr + done.stdout
    rows = read_jsonl(tmp_path / "out" / "results.jsonl")
    fixed, untouched = rows["acme__calc-1"], rows["acme__words-1"]
    assert fixed["resolved"] is True, fixed
    assert fixed["fail_to_pass_failing"] == [] and fixed["pass_to_pass_failing"] == []
    # The tests ran under the clone's own environment, not the harness's interpreter.
    assert fixed["eval_python"] == str(suite.repos / "acme__calc" / ".venv" / "bin" / "python")
    assert untouched["resolved"] is False and "empty" in untouched["eval_error"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["resolved"] == 1 and summary["resolved_rate"] == 0.5
    assert "resolved    1 (50%)" in done.stdout
    assert "(resolved 1/" in done.stderr
    # The agent was asked the problem and its hints, and never saw the test patch or the test ids.
    log = show_session(tmp_path / "home", fixed["session_id"])
    assert "the function is wrong" in log and "the plus sign went missing" in log
    assert "test_add" not in log and "FAIL_TO_PASS" not in log
    # The agent's own checks ran in the clone's environment too (linked into the task's copy).
    discovered = [e for e in json.loads(log)["events"] if e["type"] == "checks.discovered"]
    assert discovered[0]["payload"]["checks"][0]["argv"][0].endswith("/repo/.venv/bin/python")


def test_instance_tests_run_inside_the_sandbox_and_cannot_write_outside_their_copy(
    tmp_path: Path, suite: Fixture
) -> None:
    escaped = tmp_path / "escaped"
    probe = f"\n\ndef test_add():\n    try:\n        open({str(escaped)!r}, 'w').close()\n"
    probe += "    except OSError:\n        pass\n    assert add(2, 2) == 4\n"
    rewrite_instance(suite, 0, test_patch=new_test_patch(suite, "acme__calc", "test_calc.py", probe))
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out", "--workers", "2", "--evaluate")
    assert done.returncode == 0, done.stderr
    assert read_jsonl(tmp_path / "out" / "results.jsonl")["acme__calc-1"]["resolved"] is True
    assert not escaped.exists(), "an instance's test wrote outside its copy"


def test_evaluation_without_a_sandbox_runs_no_test_and_says_what_to_install(tmp_path: Path, suite: Fixture) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PROTOAGENT_STORE", "VIRTUAL_ENV")}
    env["PROTOAGENT_SANDBOX_BACKENDS"] = "none"
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out", "--evaluate", "--workers", "2", env=env)
    assert done.returncode == 0, done.stderr
    row = read_jsonl(tmp_path / "out" / "results.jsonl")["acme__calc-1"]
    assert row["model_patch"] and row["resolved"] is False and row["fail_to_pass_failing"] is None
    assert "no sandbox is available" in row["eval_error"] and "install bubblewrap" in row["eval_error"]


def test_a_patch_that_keeps_the_tests_failing_is_unresolved_and_names_the_failing_ids(
    tmp_path: Path, suite: Fixture
) -> None:
    # The instance's FAIL_TO_PASS test also asks for a behaviour the scripted fix does not give.
    first = json.loads(suite.instances.read_text().splitlines()[0])
    rewrite_instance(suite, 0, test_patch=first["test_patch"].replace("add(2, 2) == 4", "add(2, 2) == 5"))
    done = swe_batch(
        tmp_path / "home", suite, tmp_path / "out", "--workers", "1", "--evaluate", "--python", sys.executable
    )
    assert done.returncode == 0, done.stderr + done.stdout
    row = read_jsonl(tmp_path / "out" / "results.jsonl")["acme__calc-1"]
    assert row["resolved"] is False and row["fail_to_pass_failing"] == ["test_calc.py::test_add"]
    assert row["pass_to_pass_failing"] == [] and row["eval_python"] == sys.executable


def test_an_interpreter_without_pytest_is_named_in_the_evaluation_error(tmp_path: Path, suite: Fixture) -> None:
    bare = _own_environment(tmp_path / "bare", borrow=False)
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out", "--workers", "2", "--evaluate", "--python", str(bare))
    assert done.returncode == 0, done.stderr
    row = read_jsonl(tmp_path / "out" / "results.jsonl")["acme__calc-1"]
    assert row["resolved"] is False and row["fail_to_pass_failing"] == ["test_calc.py::test_add"]
    assert "pytest reported no test (exit 1)" in row["eval_error"] and "No module named pytest" in row["eval_error"]


def test_resume_keeps_every_prediction_and_runs_nothing_again(tmp_path: Path, predicted: Predicted) -> None:
    assert predicted.done.returncode == 0, predicted.done.stderr
    shutil.copytree(predicted.out, tmp_path / "out")  # the shared run's output stays as it was
    before = (tmp_path / "out" / "preds.jsonl").read_text()
    again = swe_batch(tmp_path / "home", predicted.suite, tmp_path / "out", *NAMED, "--resume")
    assert again.returncode == 0, again.stderr
    assert "resuming: 2 of 2" in again.stderr
    assert (tmp_path / "out" / "preds.jsonl").read_text() == before
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == 2


def test_a_change_that_is_not_utf8_text_is_one_clear_error_in_its_row(tmp_path: Path, suite: Fixture) -> None:
    # A command writes Latin-1 bytes into a tracked file: no JSON string holds that patch exactly.
    writer = tool_turn("execute_command", role="architect", argv=["/bin/sh", "-c", "printf '# caf\\351\\n' >> calc.py"])
    script = write_script(tmp_path / "latin1.jsonl", [writer, {"role": "architect", "text": "done"}])
    first = suite.instances.read_text().splitlines()[0]
    suite.instances.write_text(first + "\n")
    fixture = Fixture(suite.instances, suite.repos, f"scripted:{script}", suite.base)
    done = swe_batch(tmp_path / "home", fixture, tmp_path / "out", "--workers", "1")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    row = read_jsonl(tmp_path / "out" / "results.jsonl")["acme__calc-1"]
    assert row["status"] == "error" and "not UTF-8 text" in row["error"], row
    assert row["session_id"], "the run's own fields were lost"
    assert (tmp_path / "out" / "preds.jsonl").read_text() == ""


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("FAIL_TO_PASS", '"not json"', "FAIL_TO_PASS: a JSON-encoded string must hold a JSON list"),
        ("PASS_TO_PASS", "[1, 2]", "PASS_TO_PASS: give a list of test ids"),
        ("base_commit", '"--upload-pack=touch x"', "base_commit: '--upload-pack=touch x' is not a commit id"),
        ("repo", '"acme/../../etc"', "repo: 'acme/../../etc' is not owner/name"),
        ("repo", '"acme/missing"', "repo: no git clone at"),
    ],
)
def test_bad_instance_is_one_line_naming_the_line_and_field_and_nothing_runs(
    tmp_path: Path, suite: Fixture, field: str, value: str, message: str
) -> None:
    lines = suite.instances.read_text().splitlines()
    second = json.loads(lines[1])
    second[field] = json.loads(value)
    suite.instances.write_text(lines[0] + "\n" + json.dumps(second) + "\n")
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert f"instances.jsonl:2: {message}" in done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--python", "/nonexistent/python", "--evaluate"], "--python '/nonexistent/python' is not an executable file"),
        (["--python", sys.executable], "add --evaluate"),
    ],
)
def test_bad_python_flag_is_one_line_and_nothing_runs(
    tmp_path: Path, suite: Fixture, flags: list[str], message: str
) -> None:
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out", *flags)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and message in done.stderr, done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_swe_bench_flags_on_a_task_suite_are_refused(tmp_path: Path, suite: Fixture) -> None:
    suite_file = tmp_path / "suite.jsonl"
    suite_file.write_text(json.dumps({"id": "a", "objective": "x", "repo": "."}) + "\n")
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    command = [*EXE, "batch", str(suite_file), "--evaluate", "--out", str(tmp_path / "out")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--evaluate go with --format swe-bench only" in done.stderr


@pytest.mark.slow
def test_local_and_ray_engines_give_the_same_predictions(tmp_path: Path, predicted: Predicted) -> None:
    assert predicted.done.returncode == 0, predicted.done.stderr
    ray = swe_batch(tmp_path / "h2", predicted.suite, tmp_path / "ray", *NAMED, "--engine", "ray")
    assert ray.returncode == 0, ray.stderr
    assert (predicted.out / "preds.jsonl").read_text() == (tmp_path / "ray" / "preds.jsonl").read_text()
    assert read_jsonl(tmp_path / "ray" / "preds.jsonl")["acme__calc-1"]["model_patch"]


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    if missing_reason() is not None:
        pytest.skip(f"no PostgreSQL here: {missing_reason()}")
    with temporary_postgres() as url:
        yield url


@pytest.mark.slow
def test_evaluated_batch_on_a_postgres_store_records_every_session_there(
    tmp_path: Path, suite: Fixture, pg_url: str
) -> None:
    done = swe_batch(tmp_path / "home", suite, tmp_path / "out", "--workers", "2", "--evaluate", "--store", pg_url)
    assert done.returncode == 0, done.stderr
    rows = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert [rows[i]["resolved"] for i in ("acme__calc-1", "acme__words-1")] == [True, False]
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "PROTOAGENT_STORE": pg_url}
    listed = subprocess.run([*EXE, "sessions", "list", "--json"], env=env, capture_output=True, text=True, check=True)
    assert {r["session_id"] for r in rows.values()} <= {s["session_id"] for s in json.loads(listed.stdout)}
