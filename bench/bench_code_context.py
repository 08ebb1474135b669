"""code_context: index time, query time, and recall/precision against an independent ground truth.

Method
------
Three public Python projects of different sizes are fetched as sdists with ``pip download
--no-deps --no-binary :all:`` (humanize 4.9.0, rich 13.7.0, Django 4.2.7 with its tests) and one
TypeScript project (a checkout passed with ``--js``, e.g. sindresorhus/ky).

Timing: the cold index is a first ``refresh`` into an empty cache; "warm" is a new process-like
open of the cached index (a fresh ``SymbolIndex`` on the same cache file), its ``refresh`` (every
file's stat checked, nothing re-parsed) and one query; the in-memory query is the same query
again on the open index (a tool call in a running session).

Ground truth (computed here with its own ``ast`` walk, not with the index): the names defined
exactly once in the whole project as a module-level ``def``/``class`` and bound nowhere else
(no other definition, assignment, parameter, attribute store or import from outside the project
under that name, no builtin of that name, and never used as ``x.name`` on anything but a project
module). Every use of such a name can only mean that definition, so its true references are the
lines where it is read as a name, read as an attribute of a project module, or imported from a
project module. The tool is asked ``definition NAME`` and ``references NAME`` for a sample of
these names; a result line counts when its ``path:line`` is in the ground truth. For TypeScript,
definitions are compared with the captures of the grammars' own ``tags.scm`` queries (classes,
functions, methods, interfaces), a mechanism independent of the index's node walk.

Run: ``python bench/bench_code_context.py --js PATH_TO_KY_CHECKOUT``.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from protoagent.navigation.index import SymbolIndex
from protoagent.navigation.query import ask

PYTHON_PROJECTS = (("small", "humanize", "4.9.0"), ("medium", "rich", "13.7.0"), ("large", "Django", "4.2.7"))
SAMPLE = 300
"""Ground-truth names asked per project (every k-th of the sorted names)."""
TIME_TARGET_S = 15.0
QUERY_TARGET_MS = 100.0


@dataclass
class Truth:
    definitions: dict[str, tuple[str, int]] = field(default_factory=dict)
    references: dict[str, set[tuple[str, int]]] = field(default_factory=lambda: defaultdict(set))


def fetch(project: str, version: str, work: Path) -> Path:
    folder = work / f"{project}-{version}"
    if folder.is_dir():
        return folder
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, f"{project}=={version}", "-d", work], check=True, capture_output=True)
    archive = next(p for p in work.iterdir() if p.name.lower().startswith(project.lower()) and p.suffix == ".gz")
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    return next(p for p in work.iterdir() if p.is_dir() and p.name.lower() == f"{project}-{version}".lower())


def python_files(root: Path) -> dict[str, ast.Module]:
    found: dict[str, ast.Module] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.endswith(".py"):
                path = Path(folder, name)
                try:
                    found[path.relative_to(root).as_posix()] = ast.parse(path.read_bytes())
                except (SyntaxError, ValueError):
                    continue
    return found


def module_of(path: str, packages: set[str]) -> str:
    parts = path[:-3].split("/")
    name = [] if parts[-1] == "__init__" else [parts[-1]]
    folder = parts[:-1]
    while folder and "/".join(folder) in packages:
        name.insert(0, folder.pop())
    return ".".join(name)


def ground_truth(trees: dict[str, ast.Module]) -> Truth:
    packages = {p.rpartition("/")[0] for p in trees if p.endswith("__init__.py")}
    modules = {module_of(p, packages) for p in trees}
    top: dict[str, list[tuple[str, int]]] = defaultdict(list)
    bound: dict[str, int] = defaultdict(int)
    foreign_attr: set[str] = set()
    for path, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                top[node.name].append((path, node.lineno))
        project_roots = _project_roots(tree, modules)
        for node in ast.walk(tree):
            for name in _bindings(node, modules):
                bound[name] += 1
            if isinstance(node, ast.Attribute) and not _rooted_in(node.value, project_roots):
                foreign_attr.add(node.attr)
    truth = Truth()
    for name, places in top.items():
        if len(places) == 1 and bound[name] == 1 and name not in foreign_attr and not hasattr(builtins, name):
            truth.definitions[name] = places[0]
    _true_references(trees, truth, modules, packages)
    return truth


def _true_references(trees: dict[str, ast.Module], truth: Truth, modules: set[str], packages: set[str]) -> None:
    """Every line that reads a ground-truth name, reads it off a project module, or imports it."""
    for path, tree in trees.items():
        roots = _project_roots(tree, modules)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in truth.definitions:
                truth.references[node.id].add((path, node.lineno))
            elif isinstance(node, ast.Attribute) and node.attr in truth.definitions and _rooted_in(node.value, roots):
                truth.references[node.attr].add((path, node.end_lineno or node.lineno))
            elif isinstance(node, ast.ImportFrom) and _source(node, path, packages) in modules:
                for alias in node.names:
                    if alias.name in truth.definitions:
                        truth.references[alias.name].add((path, node.lineno))


def _bindings(node: ast.AST, modules: set[str]) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return [node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return [node.attr]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias) and node.asname:
        return [node.asname, node.name]  # a name imported as another is used under a name we do not track
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "") not in modules:
        return [a.name for a in node.names]  # the same name from outside the project
    return []


def _project_roots(tree: ast.Module, modules: set[str]) -> set[str]:
    """Names bound to project modules by the file's imports."""
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules or alias.name.split(".")[0] in modules:
                    roots.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    roots.add(alias.asname or alias.name)
    return roots


def _rooted_in(node: ast.expr, roots: set[str]) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in roots


def _source(node: ast.ImportFrom, path: str, packages: set[str]) -> str:
    if not node.level:
        return node.module or ""
    package = module_of(path, packages)
    parts = package.split(".") if path.endswith("__init__.py") else package.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join([*parts, *([node.module] if node.module else [])])


def timed_index(root: Path, cache: Path) -> tuple[SymbolIndex, float, int]:
    start = time.perf_counter()
    index = SymbolIndex(root, cache)
    report = index.refresh(time_limit_s=600)
    return index, time.perf_counter() - start, report.files


def warm_query(root: Path, cache: Path, name: str) -> tuple[float, float, float]:
    """Seconds to open and refresh the cached index, to answer one query, and to answer it again."""
    start = time.perf_counter()
    index = SymbolIndex(root, cache)
    index.refresh()
    opened = time.perf_counter()
    ask(index, "references", name)
    first = time.perf_counter()
    ask(index, "references", name)
    again = time.perf_counter()
    index.close()
    return opened - start, first - opened, again - first


def score(index: SymbolIndex, truth: Truth, sample: int) -> dict[str, float]:
    names = sorted(truth.definitions)
    step = max(len(names) // sample, 1)
    asked = names[::step][:sample]
    counts = dict.fromkeys(("def_hit", "def_true", "def_got", "ref_hit", "ref_true", "ref_got"), 0)
    seconds: list[float] = []
    for name in asked:
        want_def = {truth.definitions[name]}
        got_def = {(h.path, h.line) for h in ask(index, "definition", name, limit=1000).results}
        counts["def_hit"] += len(want_def & got_def)
        counts["def_true"] += len(want_def)
        counts["def_got"] += len(got_def)
        start = time.perf_counter()
        got_ref = {(h.path, h.line) for h in ask(index, "references", name, limit=100000).results}
        seconds.append(time.perf_counter() - start)
        want_ref = truth.references.get(name, set())
        counts["ref_hit"] += len(want_ref & got_ref)
        counts["ref_true"] += len(want_ref)
        counts["ref_got"] += len(got_ref)
    seconds.sort()
    return {
        "names": len(asked),
        "def_recall": counts["def_hit"] / max(counts["def_true"], 1),
        "def_precision": counts["def_hit"] / max(counts["def_got"], 1),
        "ref_recall": counts["ref_hit"] / max(counts["ref_true"], 1),
        "ref_precision": counts["ref_hit"] / max(counts["ref_got"], 1),
        "refs": counts["ref_true"],
        "query_p50_ms": 1000 * seconds[len(seconds) // 2] if seconds else 0.0,
        "query_max_ms": 1000 * seconds[-1] if seconds else 0.0,
    }


def lines_of(root: Path, suffixes: tuple[str, ...]) -> int:
    total = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        for name in files:
            if name.endswith(suffixes):
                total += Path(folder, name).read_bytes().count(b"\n")
    return total


def bench_python(work: Path, sample: int) -> None:
    print("Python: cold index, warm query, definitions and references against the AST ground truth")
    for size, project, version in PYTHON_PROJECTS:
        root = fetch(project, version, work)
        cache = work / "cache" / f"{project}.sqlite"
        cache.unlink(missing_ok=True)
        index, cold, files = timed_index(root, cache)
        truth = ground_truth(python_files(root))
        result = score(index, truth, sample)
        probe = sorted(truth.definitions)[len(truth.definitions) // 2]
        index.close()
        opened, first, again = warm_query(root, cache, probe)
        print(
            f"  {size:6} {project} {version}: {lines_of(root, ('.py',)):,} lines, {files} files; "
            f"cold index {cold:.2f}s (target < {TIME_TARGET_S:g}s on 100k+ lines)"
        )
        print(
            f"         warm open+refresh {1000 * opened:.0f} ms, first query {1000 * first:.1f} ms, "
            f"in-memory query {1000 * again:.2f} ms (target < {QUERY_TARGET_MS:g} ms); "
            f"sampled references query p50 {result['query_p50_ms']:.1f} ms, max {result['query_max_ms']:.0f} ms"
        )
        print(
            f"         {result['names']} names, {result['refs']} true references: definitions recall "
            f"{result['def_recall']:.3f} precision {result['def_precision']:.3f}; references recall "
            f"{result['ref_recall']:.3f} precision {result['ref_precision']:.3f}"
        )


def bench_package_alone(work: Path) -> None:
    """The cold index of Django's own package (its tests left out): the 100k-line case."""
    root = fetch("Django", "4.2.7", work) / "django"
    cache = work / "cache" / "django-package.sqlite"
    cache.unlink(missing_ok=True)
    index, cold, files = timed_index(root, cache)
    index.close()
    opened, first, _ = warm_query(root, cache, "get_object_or_404")
    print(
        f"  Django's django/ package alone: {lines_of(root, ('.py',)):,} Python lines, {files} files; cold index "
        f"{cold:.2f}s; warm open+refresh {1000 * opened:.0f} ms, query {1000 * first:.1f} ms"
    )


def bench_jedi(work: Path) -> None:
    """The same references query through jedi (the analyser considered instead of our resolver)."""
    import jedi

    root = fetch("rich", "13.7.0", work)
    path = root / "rich" / "cells.py"
    source = path.read_text()
    line = next(n for n, text in enumerate(source.splitlines(), 1) if text.startswith("def cell_len"))
    project = jedi.Project(root, added_sys_path=[], smart_sys_path=False, load_unsafe_extensions=False)
    timings = []
    for _ in range(2):
        start = time.perf_counter()
        found = jedi.Script(source, path=path, project=project).get_references(line, 4)
        timings.append(time.perf_counter() - start)
    index = SymbolIndex(root, work / "cache" / "rich.sqlite")
    index.refresh()
    start = time.perf_counter()
    ours = ask(index, "references", "rich.cells.cell_len", limit=1000)
    mine = time.perf_counter() - start
    index.close()
    print(
        f"  jedi references of rich.cells.cell_len: {len(found)} in {timings[0]:.2f}s cold, {timings[1]:.2f}s warm; "
        f"code_context: {ours.total} in {1000 * mine:.0f} ms"
    )


def tags_truth(root: Path) -> set[tuple[str, int, str]]:
    """``(path, line, name)`` of every class, function, method and interface the grammars' own
    ``tags.scm`` queries capture in the TypeScript and JavaScript files."""
    import tree_sitter
    import tree_sitter_javascript
    import tree_sitter_typescript

    js_tags = (Path(tree_sitter_javascript.__file__).parent / "queries" / "tags.scm").read_text()
    ts_tags = (Path(tree_sitter_typescript.__file__).parent / "queries" / "tags.scm").read_text()
    grammars = {
        ".ts": (tree_sitter.Language(tree_sitter_typescript.language_typescript()), js_tags + ts_tags),
        ".tsx": (tree_sitter.Language(tree_sitter_typescript.language_tsx()), js_tags + ts_tags),
        ".js": (tree_sitter.Language(tree_sitter_javascript.language()), js_tags),
    }
    found: set[tuple[str, int, str]] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        for name in files:
            suffix = Path(name).suffix
            if suffix not in grammars or name.endswith((".d.ts", ".min.js")):
                continue
            language, source = grammars[suffix]
            path = Path(folder, name)
            tree = tree_sitter.Parser(language).parse(path.read_bytes())
            query = tree_sitter.Query(language, source)
            for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
                kinds = [k for k in captures if k.startswith("definition.")]
                if not kinds or "name" not in captures or kinds[0] == "definition.module":
                    continue
                node, named = captures[kinds[0]][0], captures["name"][0]
                text = (named.text or b"").decode()
                found.add((path.relative_to(root).as_posix(), node.start_point[0] + 1, text))
    return found


def bench_js(root: Path, work: Path) -> None:
    print("TypeScript/JavaScript: definitions against the grammars' tags.scm captures")
    cache = work / "cache" / "js.sqlite"
    cache.unlink(missing_ok=True)
    index, cold, files = timed_index(root, cache)
    truth = tags_truth(root)
    ours: set[tuple[str, int, str]] = set()
    for name in {t[2] for t in truth}:
        try:
            hits = ask(index, "definition", name, limit=100000).results
        except Exception:  # an unknown name is rejected: nothing found for it
            continue
        ours.update((h.path, h.line, name) for h in hits if h.kind in ("class", "function", "method", "interface"))
    hit = len(truth & ours)
    print(
        f"  {root.name}: {lines_of(root, ('.ts', '.tsx', '.js'))} lines, {files} files; cold index {cold:.2f}s; "
        f"{len(truth)} tagged definitions: recall {hit / max(len(truth), 1):.3f} "
        f"precision {hit / max(len(ours), 1):.3f}"
    )
    index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, help="folder for the downloaded projects (default: a temp folder)")
    parser.add_argument("--js", type=Path, help="a JavaScript/TypeScript checkout (e.g. sindresorhus/ky)")
    parser.add_argument("--sample", type=int, default=SAMPLE)
    parser.add_argument("--jedi", action="store_true", help="also time the same query through jedi")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-code-context-"))
    (work / "cache").mkdir(parents=True, exist_ok=True)
    print(f"cpus: {os.cpu_count()}")
    bench_python(work, args.sample)
    bench_package_alone(work)
    if args.jedi:
        bench_jedi(work)
    if args.js is not None:
        bench_js(args.js, work)
    else:
        print("TypeScript/JavaScript: skipped (pass --js with a checkout)")


if __name__ == "__main__":
    main()
