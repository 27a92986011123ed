"""The shape of the code: imports flow one way between the apps, and no module imports itself round a loop.

The apps are layered config -> calibration -> judges -> annotate: a module may import
from its own layer and the ones below it, never above. Every import counts, also one
written inside a function: hiding an import in a function does not remove the dependency.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("annotate", "judges", "calibration", "config")  # lowest first
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    found = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            found[module_name(path)] = path
    return found


def imported_names(path: Path, name: str) -> set[str]:
    """Every dotted module name `path` imports, resolved against the project's modules where it names one."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names.add(source)
            # `from pkg import mod` imports the submodule pkg.mod when there is one
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in imported_names(path, name):
            if imported in modules and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def layer_of(name: str) -> int:
    return LAYERS.index(name.split(".")[0])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


@pytest.fixture(scope="module")
def graph():
    return edges(project_modules())


def test_it_finds_the_apps_modules_and_their_imports(graph):
    assert {"annotate.models", "judges.engine", "calibration.report", "config.settings"} <= set(graph)
    assert "annotate.models" in graph["judges.models"]


def test_it_has_no_upward_import(graph):
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(name)
    )
    assert upward == []


def test_it_has_no_import_cycle(graph):
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_loop_and_its_members():
    loop = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(loop) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_it_resolves_relative_imports_and_function_local_ones(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from .sibling import thing\n    import judges.engine\n")
    assert imported_names(source, "annotate.mod") >= {"annotate.sibling", "annotate.sibling.thing", "judges.engine"}


def test_no_module_is_longer_than_the_limit():
    long = sorted(
        f"{module_name(path)}: {lines} lines"
        for layer in LAYERS
        for path in (ROOT / layer).rglob("*.py")
        if "migrations" not in path.parts and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    )
    assert long == []


# --- docs/architecture.md matches the code ----------------------------------------------------


def test_the_architecture_page_lists_every_url_and_command_as_the_code_has_them():
    from tests import architecture_map

    doc = architecture_map.DOC.read_text(encoding="utf-8")
    regenerate = "run: DEBUG=1 .venv/bin/python -m tests.architecture_map --write"
    assert architecture_map.between(doc, architecture_map.BEGIN, architecture_map.END) == architecture_map.url_table(), regenerate
    assert (
        architecture_map.between(doc, architecture_map.BEGIN_COMMANDS, architecture_map.END_COMMANDS)
        == architecture_map.command_table()
    ), regenerate


def test_every_path_the_architecture_page_names_exists():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:annotate|judges|calibration|config|tests|docs)/[\w/.]*)`", doc))
    assert len(named) > 20
    assert sorted(path for path in named if not (ROOT / path).exists()) == []
