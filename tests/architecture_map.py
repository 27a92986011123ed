"""The tables of docs/architecture.md, computed from the code: every URL and every command, and the
project functions each one calls.

    DEBUG=1 .venv/bin/python -m tests.architecture_map           # prints the two tables
    DEBUG=1 .venv/bin/python -m tests.architecture_map --write   # puts them into docs/architecture.md

`tests/test_architecture.py` checks that the document holds exactly these tables, so the page a
newcomer reads cannot drift from the code. A view's or command's "calls" are the functions of other
project modules it calls, directly or through a private helper of its own module (one level down);
models, forms and serializers are left out, they are the vocabulary of every layer.
"""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("annotate", "judges", "calibration")
# Where a view's or a command's calls may land: the apps and the shared helpers below them.
PACKAGES = (*APPS, "protocols", "common")
QUIET = ("models", "forms", "serializers", "decorators", "lookups", "converters", "storable", "parsers")
BEGIN, END = "<!-- generated: urls -->", "<!-- end: urls -->"
BEGIN_COMMANDS, END_COMMANDS = "<!-- generated: commands -->", "<!-- end: commands -->"


def _path_of(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


@cache
def _parsed(module: str) -> tuple[ast.Module, dict[str, str]]:
    """The module's syntax tree and what each imported name stands for ("pkg.mod" or "pkg.mod.func")."""
    tree = ast.parse(_path_of(module).read_text(encoding="utf-8"))
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return tree, names


def _definition(tree: ast.Module, name: str) -> ast.AST | None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return node
    return None


def _is_project(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] in PACKAGES and not any(part in QUIET for part in parts[1:-1])


def _resolve(dotted: str) -> str:
    """`annotate.services.claims` stays; `annotate.services.articles_import` (a re-export) names its function."""
    module, _, name = dotted.rpartition(".")
    if _path_of(dotted) is None and _path_of(module) is not None:
        tree, names = _parsed(module)
        if _definition(tree, name) is None and name in names:
            return _resolve(names[name])
    return dotted


def _called(module: str, node: ast.AST, depth: int = 1) -> set[str]:
    tree, names = _parsed(module)
    found = set()
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name) and func.id in names:
            target = names[func.id]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names:
            target = f"{names[func.value.id]}.{func.attr}"
        elif isinstance(func, ast.Name) and func.id.startswith("_") and depth:
            helper = _definition(tree, func.id)
            found |= _called(module, helper, depth - 1) if helper else set()
            continue
        elif isinstance(func, ast.Attribute) and func.attr.startswith("_") and depth:
            # self._helper(...) in a command class
            for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
                helper = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == func.attr), None)
                found |= _called(module, helper, depth - 1) if helper else set()
            continue
        else:
            continue
        if _is_project(target):
            found.add(_resolve(target))
    return found


def _class_calls(module: str, name: str) -> set[str]:
    """What a class's methods call, and those of a project base class it extends (the import commands share one)."""
    tree, names = _parsed(module)
    cls = _definition(tree, name)
    found = _called(module, cls)
    for base in cls.bases:
        target = names.get(base.id) if isinstance(base, ast.Name) else None
        if target and target.split(".")[0] in APPS:
            found |= _class_calls(*target.rsplit(".", 1))
    return found


def _view_of(callback) -> tuple[str, str]:
    cls = getattr(callback, "cls", None)  # a DRF @api_view keeps the function's name on its class
    if cls is not None:
        return cls.__module__, cls.__name__
    view_class = getattr(callback, "view_class", None)
    if view_class is not None:
        return view_class.__module__, view_class.__name__
    return callback.__module__, callback.__name__


def _patterns(patterns, prefix=""):
    from django.urls import URLResolver

    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def _cell(calls: set[str]) -> str:
    return ", ".join(f"`{c}`" for c in sorted(calls)) or "—"


def url_table() -> str:
    from django.urls import get_resolver

    rows = ["| URL | name | view | calls |", "| --- | --- | --- | --- |"]
    for route, pattern in _patterns(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue
        module, name = _view_of(pattern.callback)
        calls = _called(module, _definition(_parsed(module)[0], name)) if module.split(".")[0] in APPS else set()
        view = f"`{module}.{name}`" if module.split(".")[0] in APPS else f"Django's `{name}`"
        rows.append(f"| `/{route}` | `{pattern.name}` | {view} | {_cell(calls)} |")
    return "\n".join(rows)


def command_table() -> str:
    rows = ["| command | module | calls |", "| --- | --- | --- |"]
    for app in APPS:
        for path in sorted((ROOT / app / "management" / "commands").glob("[!_]*.py")):
            module = f"{app}.management.commands.{path.stem}"
            rows.append(f"| `{path.stem}` | `{module}` | {_cell(_class_calls(module, 'Command'))} |")
    return "\n".join(rows)


DOC = ROOT / "docs" / "architecture.md"


def between(text: str, begin: str, end: str) -> str:
    return text.split(begin, 1)[1].split(end, 1)[0].strip()


def replaced(text: str, begin: str, end: str, body: str) -> str:
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n{body}\n{end}{rest.split(end, 1)[1]}"


if __name__ == "__main__":
    import sys

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    if "--write" in sys.argv:
        text = replaced(DOC.read_text(encoding="utf-8"), BEGIN, END, url_table())
        DOC.write_text(replaced(text, BEGIN_COMMANDS, END_COMMANDS, command_table()), encoding="utf-8")
    else:
        print(BEGIN, url_table(), END, "", BEGIN_COMMANDS, command_table(), END_COMMANDS, sep="\n")
