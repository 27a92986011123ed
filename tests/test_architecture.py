"""The shape of the code.

Which way imports run, that no module imports itself round a loop and that the pure modules import
no Django are import contracts (`[tool.importlinter]` in pyproject.toml), checked by `lint-imports`
in `make test`. Here: no module is too long, and docs/architecture.md says what the code has.
"""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "calibration", "interchange", "judges", "annotate", "protocols", "common")
IMPORT_LINTER = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
CONTRACTS = IMPORT_LINTER["contracts"]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_it_lists_the_largest_modules_for_make_lint():
    # Size is reported, not fenced (issue 38): `make lint` prints the largest modules.
    from bench.module_sizes import sizes

    rows = sizes()
    assert rows == sorted(rows, reverse=True) and len(rows) > 100
    assert all(not path.startswith(("annotate/migrations", "judges/migrations", "calibration/migrations")) for _, path in rows)


def test_every_package_of_the_project_is_under_the_import_contracts():
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests"}
    (layers,) = [contract["layers"] for contract in CONTRACTS if contract["id"] == "layers"]
    assert packages <= set(IMPORT_LINTER["root_packages"])
    assert [layer.strip("()") for layer in layers] == list(PACKAGES)


# --- docs/architecture.md matches the code ----------------------------------------------------


def test_the_architecture_page_lists_every_url_and_command_as_the_code_has_them():
    from tests import architecture_map

    doc = architecture_map.DOC.read_text(encoding="utf-8")
    regenerate = "run: DEBUG=1 .venv/bin/python -m tests.architecture_map --write"
    assert architecture_map.between(doc, architecture_map.BEGIN, architecture_map.END) == architecture_map.url_table(), regenerate
    assert (
        architecture_map.between(doc, architecture_map.BEGIN_COMMANDS, architecture_map.END_COMMANDS) == architecture_map.command_table()
    ), regenerate


def test_every_path_the_architecture_page_names_exists():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:annotate|judges|calibration|interchange|config|common|protocols|tests|docs)/[\w/.]*)`", doc))
    assert len(named) > 20
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_the_architecture_page_lists_the_pure_modules_of_the_import_contract():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paragraph = doc.split("- **Pure modules**", 1)[1].split("\n- **", 1)[0]
    named = {path.removesuffix("/").removesuffix(".py").replace("/", ".") for path in re.findall(r"`([\w/.]+(?:\.py|/))`", paragraph)}
    (pure,) = [contract["source_modules"] for contract in CONTRACTS if contract["id"] == "pure"]
    assert named == set(pure)
