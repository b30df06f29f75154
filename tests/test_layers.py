"""The layers of ``docs/design.md`` hold: checked on the import graph of the source, not assumed.

Every ``import`` counts, at the top of a module or inside a function (a lazy import is still an
edge), so that no circle hides behind one. The graph is read from the files with ``ast``, and the
layers from the one layers contract of ``pyproject.toml`` (``[tool.importlinter]``), whose
contracts ``lint-imports`` checks too where ``import-linter`` is installed (the ``test`` extra).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from rummy_env.games import GAMES

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
LAYERS_CONTRACT = next(contract for contract in CONTRACTS if contract["type"] == "layers")
PACKAGES = tuple(reversed(LAYERS_CONTRACT["layers"]))
"""The layers, lowest first: the environment, the agents, the front-ends (``pyproject.toml``'s
layers contract; ``docs/design.md``, "Layers")."""

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


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer(module: str) -> int:
    """The layer of a project module, 0 the lowest (``PACKAGES``)."""
    return PACKAGES.index(module.split(".")[0])


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


def test_each_layer_imports_only_downward():
    """``rummy_env`` imports nothing of ``agents`` or the front-ends, ``agents`` no front-end."""
    offenders = [f"{module} imports {target}" for module, found in imports().items() for target, _ in found
                 if target.split(".")[0] in PACKAGES and layer(target) > layer(module)]
    assert not offenders, offenders


def test_the_layers_are_ordered_environment_agents_front_ends():
    assert layer("rummy_env.cards") < layer("agents.arena") < layer("rummy_apps.play") == layer("rummy_apps.web.app")


def test_the_layers_contract_has_no_exception():
    """Every front-end lives in ``rummy_apps``: the contract ignores no import."""
    assert not LAYERS_CONTRACT.get("ignore_imports"), LAYERS_CONTRACT["ignore_imports"]


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


GAME_MODULES = ("rummy_env.games",)
"""Where a game's name may be compared: the game modules and their registry (``docs/design.md``,
"One game registry")."""


def name_branches(source: str, names: set[str]) -> list[str]:
    """Where ``source`` branches on a game's name: a comparison with one (``== "romi"``,
    ``in ("indian", …)``), a ``match`` case on one, or a table literal keyed by one (caches and ids
    keyed by the name a caller gave are no branch)."""

    def is_name(node) -> bool:
        return isinstance(node, ast.Constant) and node.value in names

    def holds_name(node) -> bool:
        return is_name(node) or isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(map(is_name, node.elts))

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(map(holds_name, (node.left, *node.comparators))):
            found.append(f"{node.lineno} (compares a game's name)")
        elif isinstance(node, ast.MatchValue) and is_name(node.value):
            found.append(f"{node.lineno} (a case on a game's name)")
        elif isinstance(node, ast.Dict) and any(map(is_name, node.keys)) or isinstance(node, ast.Call) and any(
                keyword.arg in names for keyword in node.keywords):
            found.append(f"{node.lineno} (a table keyed by game)")
    return found


@pytest.mark.parametrize("source", [
    'if game == "romi": pass',
    'if rules.game in ("indian", "basic"): pass',
    'match game:\n    case "basic": pass',
    'CORES = {"indian": 1, "basic": 2}',
    'WEIGHTS = dict(default=1, **{"romi": 2})',
    'WEIGHTS = dict(indian=1, romi=2)',
])
def test_the_name_branch_finder_finds_each_kind(source):
    assert name_branches(source, {"indian", "basic", "romi"}), source


def test_the_name_branch_finder_passes_data_read_from_the_spec():
    assert not name_branches('size = rules.spec.max_table_melds\nif spec.declares: pass\n'
                             'x = by_game("env_name")\nif name == "random": pass', {"indian", "basic", "romi"})


def test_no_name_branch_outside_the_game_modules():
    """No branch on a game's name outside ``rummy_env/games/`` (``docs/design.md``: everything that
    differs between games is data or a hook on its spec, or on the ``RuleSet`` made from it)."""
    names = set(GAMES)
    offenders = []
    for module, path in modules().items():
        if module.startswith(GAME_MODULES) or module in PENDING_NAME_BRANCHES:
            assert module not in PENDING_NAME_BRANCHES or name_branches(path.read_text(encoding="utf-8"), names), (
                f"{module} branches on no game name any more: remove it from PENDING_NAME_BRANCHES")
            continue
        offenders += [f"{module}:{where}" for where in name_branches(path.read_text(encoding="utf-8"), names)]
    assert not offenders, offenders


@pytest.mark.skipif(shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None,
                    reason="import-linter is not installed (the test extra installs it)")
def test_the_import_linter_contracts_are_kept():
    command = str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
