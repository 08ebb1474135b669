"""Discovering a workspace's checks from manifests and paths, without importing or executing anything.

Python suites (see :mod:`protoagent.checks.python_suites`), a root ``Cargo.toml`` and the
``test``, ``typecheck``, ``lint`` and ``build`` scripts of a root ``package.json``. A Python
project without any check gets the fixed bootstrap runner ``python-tests``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from protoagent.checks.executables import resolve_runner, toolchain_env
from protoagent.checks.interpreter import Interpreter, select_interpreter
from protoagent.checks.inventory import DependencyInventory, RootListing, list_root, read_prefix
from protoagent.checks.python_suites import PythonSuite, find_python_suite
from protoagent.checks.types import BOOTSTRAP_CHECK_ID, CheckPlan, CheckSpec

NPM_SCRIPTS = ("test", "typecheck", "lint", "build")
MAX_MANIFEST_BYTES = 1 << 20
_NPM_PLACEHOLDER = re.compile(r"""^\s*echo\s+["']?Error: no test specified["']?\s*&&\s*exit\s+1\s*$""")
_PYTHON_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_MAX_PROBED_DIRECTORIES = 200


def discover_checks(root: str | os.PathLike[str], python: str | Interpreter | None = None) -> CheckPlan:
    """Discover the checks of the workspace at ``root``.

    ``python`` is the interpreter for Python checks; by default :func:`select_interpreter` chooses
    it (only when a Python check is needed).
    """
    workspace = Path(os.path.abspath(root))
    listing = list_root(workspace)
    inventory = DependencyInventory()
    checks: list[CheckSpec] = []
    notes: list[str] = []
    suite = find_python_suite(workspace, listing)
    if suite is not None:
        checks.extend(_python_checks(suite, _python_path(workspace, python)))
        for path in suite.dependency_files:
            inventory.add(path)
        notes.extend(suite.notes)
    if "Cargo.toml" in listing.files:
        checks.append(_cargo_check(workspace, listing, inventory))
    if "package.json" in listing.files:
        checks.extend(_npm_checks(workspace, listing, inventory, notes))
    bootstrap: tuple[str, ...] = ()
    if not checks:
        evidence = _python_project_evidence(workspace, listing)
        if evidence is not None:
            checks.append(_bootstrap_check(_python_path(workspace, python), evidence))
            bootstrap = (BOOTSTRAP_CHECK_ID,)
    return CheckPlan(
        checks=tuple(checks),
        bootstrap_checks=bootstrap,
        config_path=None,
        dependency_files=inventory.files(),
        dependency_files_truncated=inventory.truncated,
        notes=tuple(notes),
    )


def _python_path(root: Path, python: str | Interpreter | None) -> str:
    if isinstance(python, Interpreter):
        return python.path
    return python if python is not None else select_interpreter(root).path


def _python_unavailable(python: str) -> str | None:
    return None if os.path.isabs(python) else f"no Python interpreter was found (looked for {python!r})"


def _python_checks(suite: PythonSuite, python: str) -> list[CheckSpec]:
    unavailable = _python_unavailable(python)
    if suite.runner == "pytest":
        # No cache folder in the repository; bytecode is off for every command already.
        pytest_argv = (python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_uncollected_targets(suite))
        return [
            CheckSpec("pytest", pytest_argv, paths=suite.paths, reason=suite.reason, runner_unavailable=unavailable)
        ]
    checks: list[CheckSpec] = []
    for group in suite.unittest_groups:
        argv: list[str] = [python, "-m", "unittest", "discover", "-s", group.start, "-p", group.pattern]
        if group.top != group.start:
            argv += ["-t", group.top]
        argv.append("-q")
        slug = "root" if group.start == "." else group.start.replace("/", "-")
        several = len(suite.unittest_groups) > 1
        check_id = f"unittest-{slug}" if several else "unittest"
        reason = f"{suite.reason}; discover starts at {group.start}" if several else suite.reason
        checks.append(
            CheckSpec(check_id, tuple(argv), paths=suite.paths, reason=reason, runner_unavailable=unavailable)
        )
    return checks


def _uncollected_targets(suite: PythonSuite) -> tuple[str, ...]:
    """What pytest is given to run when a discovered test module has a name its default
    collection skips (``tests.py``, ``src/tests.py``): every test folder and module the suite
    found, since named targets replace the default search; nothing otherwise."""
    modules = [p for p in suite.paths if p.endswith(".py") and os.path.basename(p) != "conftest.py"]
    if all(_collected_by_default(os.path.basename(p)) for p in modules):
        return ()
    targets = (p for p in suite.paths if p in modules or not os.path.splitext(p)[1])
    return tuple(f"./{p}" if p.startswith("-") else p for p in targets)  # a file name is never an option


def _collected_by_default(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py")


def _cargo_check(root: Path, listing: RootListing, inventory: DependencyInventory) -> CheckSpec:
    manifest = read_prefix(root, "Cargo.toml", 64 * 1024)
    kind = "a workspace" if re.search(rb"^\[workspace\]", manifest, re.M) else "a crate"
    paths: list[str] = [name for name in ("Cargo.toml", "Cargo.lock") if name in listing.files]
    paths += [name for name in ("src", "tests") if name in listing.directories]
    for name in ("Cargo.toml", "Cargo.lock"):
        if name in listing.files:
            inventory.add(name)
    program, unavailable = resolve_runner("cargo")
    return CheckSpec(
        "cargo-test",
        (program, "test"),
        env=toolchain_env(program),
        paths=tuple(paths),
        reason=f"root Cargo.toml declares {kind}",
        runner_unavailable=unavailable,
    )


def _npm_checks(root: Path, listing: RootListing, inventory: DependencyInventory, notes: list[str]) -> list[CheckSpec]:
    raw = read_prefix(root, "package.json", MAX_MANIFEST_BYTES + 1)
    try:
        manifest = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_MANIFEST_BYTES else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        manifest = None
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    if not isinstance(scripts, dict):
        if manifest is None:
            notes.append("package.json is not valid JSON (or over 1 MiB); npm scripts were not discovered")
        return []
    paths = tuple(name for name in ("package.json", "package-lock.json") if name in listing.files)
    program, unavailable = resolve_runner("npm")
    checks: list[CheckSpec] = []
    for name in NPM_SCRIPTS:
        script = scripts.get(name)
        if not isinstance(script, str) or not script.strip():
            continue
        if name == "test" and _NPM_PLACEHOLDER.match(script):
            notes.append("package.json test script is npm's placeholder; skipped")
            continue
        argv = (program, "test") if name == "test" else (program, "run", name)
        shown = script if len(script) <= 80 else script[:77] + "..."
        reason = f"package.json defines the {name!r} script: {shown}"
        checks.append(
            CheckSpec(
                f"npm-{name}",
                argv,
                env=toolchain_env(program),
                paths=paths,
                reason=reason,
                runner_unavailable=unavailable,
            )
        )
    if checks:
        for path in paths:
            inventory.add(path)
    return checks


def _python_project_evidence(root: Path, listing: RootListing) -> str | None:
    """Why the workspace counts as a Python project, or ``None``: manifests, root or src modules,
    or a root package. Probes a bounded number of directories, never walks."""
    for name in _PYTHON_MANIFESTS:
        if name in listing.files:
            return f"{name} at the root"
    modules = sorted(name for name in listing.files if name.endswith(".py"))
    if modules:
        return f"{modules[0]} at the root"
    if "src" in listing.directories:
        found = _src_python(root)
        if found is not None:
            return found
    for name in sorted(listing.directories)[:_MAX_PROBED_DIRECTORIES]:
        if not name.startswith(".") and os.path.isfile(os.path.join(root, name, "__init__.py")):
            return f"package {name}/ at the root"
    return None


def _src_python(root: Path) -> str | None:
    try:
        with os.scandir(os.path.join(root, "src")) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)[:_MAX_PROBED_DIRECTORIES]
    except OSError:
        return None
    for entry in entries:
        if entry.is_file() and entry.name.endswith(".py"):
            return f"src/{entry.name}"
        if entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
            return f"package src/{entry.name}/"
    return None


def _bootstrap_check(python: str, evidence: str) -> CheckSpec:
    return CheckSpec(
        BOOTSTRAP_CHECK_ID,
        (python, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-q"),
        reason=f"Python project ({evidence}) without tests: runner for root test_*.py regressions still to be written",
        source="bootstrap",
        runner_unavailable=_python_unavailable(python),
    )
