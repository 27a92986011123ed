"""No module of judges/ or calibration/ reaches into another module's private parts.

A name with a leading underscore belongs to the module that defines it. Another module that
imports it (`from x import _y`), reads or sets it (`obj._y`, `obj._y = ...`) couples itself to that
module's insides with no import arrow to show it: judges/batch.py once drove the engine through its
`_with_cache()`. Only `self`/`cls`, and objects of classes the module defines itself, may use their
own underscore names; Django's `_meta` and the namedtuple methods are public by convention. A
package-private module (`calibration/metrics/_common.py`) may be imported by its siblings.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("judges", "calibration")
PUBLIC_BY_CONVENTION = {"_meta", "_replace", "_asdict", "_fields", "_make"}


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def own_names(tree: ast.Module) -> set[str]:
    """The underscore names this module defines: its functions, classes and the attributes it sets on `self`/`cls`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
            if node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if private(name)}


def violations(source: str, package: str) -> list[str]:
    """What `source`, a module of `package`, takes from other modules' private parts."""
    tree = ast.parse(source)
    own = own_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parent, _, leaf = node.module.rpartition(".")
            if private(leaf) and parent != package:
                found.append(f"line {node.lineno}: imports the private module {node.module}")
            found += [f"line {node.lineno}: imports {alias.name} from {node.module}" for alias in node.names if private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {alias.name}" for alias in node.names if any(map(private, alias.name.split(".")))]
        elif isinstance(node, ast.Attribute) and private(node.attr) and node.attr not in PUBLIC_BY_CONVENTION:
            mine = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if not mine and node.attr not in own:
                verb = "sets" if isinstance(node.ctx, ast.Store) else "uses"
                found.append(f"line {node.lineno}: {verb} {ast.unparse(node)}, another module's private name")
    return found


def modules() -> list[Path]:
    return sorted(path for package in CHECKED for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts)


def test_it_reads_every_module_of_judges_and_calibration():
    names = {path.relative_to(ROOT).as_posix() for path in modules()}
    assert {"judges/engine.py", "judges/batch.py", "calibration/metrics/bootstrap.py"} <= names


@pytest.mark.parametrize("path", modules(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_it_finds_no_module_using_another_modules_private_names(path):
    package = ".".join(path.relative_to(ROOT).parent.parts)
    assert violations(path.read_text(encoding="utf-8"), package) == []


def test_it_catches_each_kind_of_reach():
    # The checker itself can fail: each line of this sample reaches into another module.
    source = (
        "from judges.engine import _Engine\n"
        "from calibration.metrics._common import TIED\n"
        "import judges._hidden\n"
        "def go(engine):\n"
        "    engine._fatal = 'x'\n"
        "    return engine._with_cache()\n"
    )
    assert violations(source, "judges") == [
        "line 1: imports _Engine from judges.engine",
        "line 2: imports the private module calibration.metrics._common",
        "line 3: imports judges._hidden",
        "line 5: sets engine._fatal, another module's private name",
        "line 6: uses engine._with_cache, another module's private name",
    ]
    # ...and lets a module use its own private parts, and a sibling its package's private module.
    own = "from calibration.metrics._common import TIED\nclass _Box:\n    def __init__(self):\n        self._n = 1\ndef f(box):\n    return box._n\n"
    assert violations(own, "calibration.metrics") == []
