"""The layers of ``docs/design.md`` hold: checked on the import graph of the source, not assumed.

Every ``import`` counts, at the top of a module or inside a function (a lazy import is still an
edge), so that no circle hides behind one. The graph is read from the files with ``ast``; the
contracts of ``pyproject.toml`` (``[tool.importlinter]``) are checked too where ``import-linter``
is installed (the ``test`` extra).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rummy_env", "agents")

FRONT_ENDS = ("rummy_env.play", "rummy_env.web", "rummy_env.integrations")
"""The top layer of ``rummy_env``: front-ends above ``agents`` (``docs/design.md``, "Layers")."""

PENDING_PRIVATE: dict[tuple[str, str, str], str] = {
}
"""(module, the module it reaches into, the private name) left in files another change is
rewriting; each must still be there (else remove it)."""

PENDING_NAME_BRANCHES: dict[str, str] = {}
"""Modules that still compare a game's name, in files another change is rewriting."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def _resolve(module: str, path: Path, level: int, target: str | None) -> str:
    if not level:
        return target or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


@cache
def imports() -> dict[str, list[tuple[str, str | None]]]:
    """Module -> every (imported module, name taken from it or None) anywhere in its source."""
    known = modules()
    out: dict[str, list[tuple[str, str | None]]] = {}
    for module, path in known.items():
        found: list[tuple[str, str | None]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, path, node.level, node.module)
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    found.append((submodule, None) if submodule in known else (source, alias.name))
        out[module] = found
    return out


def project_edges() -> dict[str, set[str]]:
    known = modules()
    return {module: {target for target, _ in found if target in known and target != module}
            for module, found in imports().items()}


def circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.add(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def is_front_end(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FRONT_ENDS)


def closure(start: str) -> set[str]:
    """Every module ``start`` imports, directly or not (project modules followed, others listed)."""
    known = modules()
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        for target, _ in imports().get(module, ()):
            top = target.split(".")[0]
            name = target if target in known else top
            if name not in seen:
                seen.add(name)
                if name in known:
                    todo.append(name)
    return seen


def test_the_import_graph_has_no_circle():
    found = circles(project_edges())
    assert not found, f"import circles: {[sorted(c) for c in found]}"


def test_the_circle_finder_finds_a_circle_through_a_lazy_import():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_core_of_rummy_env_never_imports_agents():
    offenders = [f"{module} imports {target}" for module, found in imports().items()
                 if module.startswith("rummy_env") and not is_front_end(module)
                 for target, _ in found if target == "agents" or target.startswith("agents.")]
    assert not offenders, offenders


def test_agents_import_no_front_end():
    offenders = [f"{module} imports {target}" for module, found in imports().items() if module.startswith("agents")
                 for target, _ in found if is_front_end(target)]
    assert not offenders, offenders


@pytest.mark.parametrize("module", ["rummy_env.vector", "rummy_env.batch", "rummy_env.episode",
                                    "rummy_env.game", "rummy_env.rules", "rummy_env.encoding"])
def test_the_batched_loop_and_the_rules_need_no_pettingzoo(module):
    reached = closure(module)
    assert "pettingzoo" not in reached and "rummy_env.aec_env" not in reached, sorted(reached)


def test_the_rules_layer_needs_no_rl_library():
    for module in ("rummy_env.rules", "rummy_env.game", "rummy_env.solver", "rummy_env.games"):
        reached = closure(module)
        assert not reached & {"gymnasium", "pettingzoo", "torch", "agents"}, (module, sorted(reached))


def test_no_module_reaches_into_another_modules_private_names():
    known = modules()
    found = set()
    for module, path in known.items():
        aliases: dict[str, str] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in known:
                        aliases[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, path, node.level, node.module)
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in known:
                        aliases[alias.asname or alias.name] = submodule
                    elif source in known and alias.name.startswith("_") and source != module:
                        found.add((module, source, alias.name))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")
                    and aliases[node.value.id] != module):
                found.add((module, aliases[node.value.id], node.attr))
    unexpected = found - set(PENDING_PRIVATE)
    assert not unexpected, f"private names used across modules: {sorted(unexpected)}"
    resolved = set(PENDING_PRIVATE) - found
    assert not resolved, f"no longer used, remove them from PENDING_PRIVATE: {sorted(resolved)}"


def test_no_name_branch_outside_the_game_modules():
    """No comparison with a shipped game's name outside ``rummy_env/games/`` (``docs/design.md``:
    everything that differs between games is data or a hook on its spec)."""
    names = {"indian", "basic", "romi"}
    allowed = ("rummy_env.games", "rummy_env.compiled")  # the compiled cores keep their checks for now
    offenders = []
    for module, path in modules().items():
        if module.startswith(allowed) or module in PENDING_NAME_BRANCHES:
            assert module not in PENDING_NAME_BRANCHES or _compares_a_name(path, names), (
                f"{module} compares no game name any more: remove it from PENDING_NAME_BRANCHES")
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                parts = [node.left, *node.comparators]
                if any(isinstance(p, ast.Constant) and p.value in names for p in parts) or any(
                        isinstance(p, (ast.Tuple, ast.List, ast.Set))
                        and any(isinstance(e, ast.Constant) and e.value in names for e in p.elts) for p in parts):
                    offenders.append(f"{module}:{node.lineno}")
            elif isinstance(node, ast.Dict) and {k.value for k in node.keys if isinstance(k, ast.Constant)} >= names:
                offenders.append(f"{module}:{node.lineno} (a table keyed by game)")
    assert not offenders, offenders


def _compares_a_name(path: Path, names: set[str]) -> bool:
    return any(isinstance(node, ast.Compare) and any(isinstance(p, ast.Constant) and p.value in names
                                                     for p in (node.left, *node.comparators))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


@pytest.mark.skipif(shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None,
                    reason="import-linter is not installed (the test extra installs it)")
def test_the_import_linter_contracts_are_kept():
    command = str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
