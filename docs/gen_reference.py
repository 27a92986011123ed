"""Writes the generated reference pages of the docs site from the code itself:

- docs/reference/cli.md: every command of the project's apps, its help as its own argparse parser prints it;
- docs/reference/settings.md: every environment variable config/settings.py reads (through config/env.py);
- docs/reference/api-routes.md: every route of the OpenAPI schema, with its methods and who may call it.

    DEBUG=1 .venv/bin/python docs/gen_reference.py          # rewrite the three pages
    DEBUG=1 .venv/bin/python docs/gen_reference.py --check  # exit 1 if a committed page is out of date

tests/test_docs_reference.py runs the check, so a new option, variable or route fails the suite until
the pages are written again.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "docs" / "reference"
# The apps whose commands are ours; Django's and the packages' own commands are documented by them.
COMMAND_APPS = ("annotate", "calibration", "judges", "common")
# argparse wraps at the terminal's width: a fixed width keeps the page the same on every machine.
HELP_WIDTH = "100"
# Django's options that every command has; listed once at the top of the page instead of on every command.
DJANGO_COMMON = ("--version", "-v", "--settings", "--pythonpath", "--traceback", "--no-color", "--force-color", "--skip-checks")

# What each variable of config/settings.py means. The kind and the name come from the code; a variable
# read there without a line here (or a line here for a variable no longer read) fails the check.
SETTINGS = {
    "SECRET_KEY": (
        "none; required to serve pages unless `DEBUG` is on",
        "Django's signing key. Serving (`make serve`, `runserver`, gunicorn) needs it in the environment; commands "
        "that serve nothing run without it, and when it is unset `manage.py` reads `.demo-secret-key` (made by "
        "`make demo`), so that `create_accounts` signs its links with the demo site's key. `create_accounts` "
        "refuses to run with no key at all",
    ),
    "DEBUG": ("`false`", "`true`/`false` (also 1/0, yes/no); anything else is an error"),
    "ALLOWED_HOSTS": ("`127.0.0.1,localhost`", "comma-separated host names"),
    "CSRF_TRUSTED_ORIGINS": ("empty", "comma-separated origins allowed to post forms, e.g. `https://pairwise.example.org`"),
    "SECURE_SSL_REDIRECT": ("`false`", "redirect every plain-HTTP request to HTTPS"),
    "SESSION_COOKIE_SECURE": ("`false`", "send the login cookie over HTTPS only"),
    "CSRF_COOKIE_SECURE": ("`false`", "send the CSRF cookie over HTTPS only"),
    "SECURE_HSTS_SECONDS": ("`0`", "how long browsers must use HTTPS only (HSTS); see [Deploy](../operations/deploy.md)"),
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": ("`false`", "the HSTS header's `includeSubDomains`"),
    "SECURE_HSTS_PRELOAD": ("`false`", "the HSTS header's `preload`"),
    "TRUST_PROXY_HEADERS": ("`false`", "believe the reverse proxy's `X-Forwarded-Proto`, `-Host` and `-For`; only behind one"),
    "DATABASE_URL": (
        "`sqlite:///<checkout>/db.sqlite3`",
        "e.g. `postgres://user@127.0.0.1:5432/pairwise`; SQLite runs in WAL mode",
    ),
    "CONN_MAX_AGE": (
        "`60` on PostgreSQL, `0` on SQLite",
        "seconds a database connection is kept for later requests (checked before reuse)",
    ),
    "STATIC_ROOT": ("`<checkout>/staticfiles`", "where `make serve` collects the static files"),
    "LOG_LEVEL": ("`WARNING`, `INFO` under `make serve`", "`DEBUG`, `INFO`, `WARNING`, `ERROR` or `CRITICAL`; logs go to stderr"),
    "AXES_FAILURE_LIMIT": ("`5`", "failed logins for one username from one address before it is locked"),
    "AXES_IP_FAILURE_LIMIT": (
        "`30`",
        "failed logins from one address, over every username, before the address is locked ([Security](../operations/security.md))",
    ),
    "AXES_COOLOFF_MINUTES": ("`15`", "how long a lock lasts; `0`: until `manage.py axes_reset_username` (or `axes_reset_ip`)"),
    "MAX_ARTICLE_BYTES": ("`2097152`", "larger articles are refused at import, with a message"),
    "UPLOAD_MAX_BYTES": (
        "`209715200` (200 MB)",
        "the largest file the browser's uploads accept (benchmark, rubric, labels); a larger one is refused with 413 "
        "([Upload in the browser](../how-to/upload-in-the-browser.md))",
    ),
    "UPLOAD_ZIP_MAX_BYTES": (
        "`1073741824` (1 GB)",
        "the most a benchmark's uploaded zip may unpack to, checked before and while unpacking",
    ),
    "UPLOAD_ZIP_MAX_MEMBERS": ("`20000`", "the most files and folders a benchmark's uploaded zip may hold"),
    "CALIBRATION_ROUNDS": ("`1000`", "bootstrap rounds behind the dashboard's and the API's confidence intervals, 0 to 100000"),
    "REDIS_URL": (
        "empty: the database cache",
        "a Redis server for the cache every process shares (`redis://127.0.0.1:6379/0`; also `rediss://`, `unix://`)",
    ),
    "JUDGE_API_KEY_ENVS": (
        "empty",
        "comma-separated extra variable names a judge may read its key from, besides names ending in `_API_KEY` "
        "(never `SECRET_KEY` or `DATABASE_URL`)",
    ),
    "JUDGE_ENDPOINTS": (
        "`openai https://api.openai.com/v1 OPENAI_API_KEY`",
        "the judge endpoints configured on the server, comma-separated entries of `name base_url KEY_VARIABLE`, e.g. "
        "`openai https://api.openai.com/v1 OPENAI_API_KEY, deepseek https://api.deepseek.com/v1 DEEPSEEK_API_KEY`; "
        "staff who are not superusers choose among them ([Security](../operations/security.md))",
    ),
    "JUDGE_BASE_URL_HOSTS": (
        "the hosts of `JUDGE_ENDPOINTS`",
        "comma-separated host names any judge's base URL may point at, superusers' included, e.g. "
        "`api.openai.com,api.deepseek.com`; `*` alone: any host",
    ),
    "JUDGE_ALLOW_ADDRESSES": (
        "empty",
        "comma-separated addresses or networks judges may connect to although they are not public "
        "([the outbound policy](../operations/outbound-policy.md)), e.g. `127.0.0.1` for a model served on this machine, `10.0.0.0/8`",
    ),
    "JUDGE_BATCH_MAX_LINES": (
        "`50000`",
        "lines per Batch API file (batch runs split their requests into files of at most this many), e.g. `10000`",
    ),
    "JUDGE_BATCH_POLL_SECONDS": ("`10`", "seconds between two looks at a batch run's batches, e.g. `60`"),
    "PUBLIC_BASE_URL": (
        "empty",
        "the site's address as its users reach it, e.g. `https://pairwise.example.org`: the start of the links `create_accounts` prints",
    ),
}
# The kind of value each helper of config/env.py takes.
KINDS = {
    "env_bool": "true or false",
    "env_int": "whole number",
    "env_list": "comma-separated list",
    "env_choice": "one of a list",
    "env_database": "database URL",
    "env_endpoints": "endpoint list",
    "env_hosts": "host names",
    "env_networks": "addresses or networks",
    "env_path": "path",
    "env_redis_url": "Redis URL",
    "env_secret_key": "text",
    "env_url": "URL",
    "env_variable_names": "variable names",
}


def settings_variables() -> list[tuple[str, str]]:
    """(variable, kind) for every `env_*("NAME", ...)` call of config/settings.py, in the file's order."""
    tree = ast.parse((REPO / "config" / "settings.py").read_text(encoding="utf-8"))
    found: list[tuple[int, int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("env_"):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                kind = KINDS.get(node.func.id, node.func.id)
                bounds = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg in ("minimum", "maximum")}
                if node.func.id == "env_int":
                    low, high = bounds.get("minimum", 0), bounds.get("maximum")
                    kind = f"whole number, {low} to {high}" if high is not None else f"whole number, at least {low}"
                found.append((node.lineno, node.col_offset, node.args[0].value, kind))
    return [(name, kind) for _, _, name, kind in sorted(found)]


def settings_page() -> str:
    rows = []
    variables = settings_variables()
    names = [name for name, _ in variables]
    unknown = sorted(set(names) - set(SETTINGS))
    stale = sorted(set(SETTINGS) - set(names))
    if unknown or stale:
        raise SystemExit(f"docs/gen_reference.py SETTINGS: describe {unknown}, drop {stale}")
    for name, kind in variables:
        default, meaning = SETTINGS[name]
        rows.append(f"| `{name}` | {kind} | {default} | {meaning} |")
    return "\n".join(
        [
            "# Settings",
            "",
            "<!-- Generated by docs/gen_reference.py from config/settings.py; do not edit by hand. -->",
            "",
            "Environment variables only. Each is read and checked when the settings load (`config/env.py`): a bad",
            "value stops every command, and the server, with one line naming the variable and what it takes",
            "(`CALIBRATION_ROUNDS must be a whole number from 0 to 100000, got '-5'`), never a traceback.",
            "",
            "| variable | takes | default | meaning |",
            "| --- | --- | --- | --- |",
            *rows,
            "| the variable named by `--api-key-env` | text | none | each LLM judge's API key, read when a run starts |",
            "",
            "`make` variables: `PYTHON` (the interpreter used to create `.venv`); for `make serve` and `make demo`",
            "(also read from the environment): `HOST` (`127.0.0.1`) and `PORT` (`8000`) to listen on, `WEB_WORKERS`",
            "(two a core plus one) gunicorn processes with `WEB_THREADS` (`2`) threads each. `make serve` also reads",
            "`FORWARDED_ALLOW_IPS` (`127.0.0.1,::1`): the proxies whose `X-Forwarded-Proto` gunicorn believes.",
            "Serving on another address than `127.0.0.1` needs it in `ALLOWED_HOSTS`. The tests read the benchmark",
            "sample from `$PAIRWISE_SHARED/wlc-sample` (default `../shared`).",
            "",
        ]
    )


def _strip_common(help_text: str) -> str:
    """The command's help without Django's options that every command shares."""
    out, skipping = [], False
    for line in help_text.splitlines():
        stripped = line.strip()
        if line.startswith("  ") and not line.startswith("   ") and stripped.startswith("-"):
            skipping = stripped.startswith(DJANGO_COMMON)
        elif not line.startswith(" "):
            skipping = False
        if not skipping:
            out.append(line.rstrip())
    return "\n".join(out).rstrip()


def cli_page() -> str:
    from django.core.management import get_commands, load_command_class

    os.environ["COLUMNS"] = HELP_WIDTH
    commands = sorted((name, app) for name, app in get_commands().items() if app in COMMAND_APPS)
    parts = [
        "# Commands",
        "",
        "<!-- Generated by docs/gen_reference.py from each command's own parser; do not edit by hand. -->",
        "",
        "Every command runs as `.venv/bin/python manage.py NAME ...` from the checkout. Besides the options",
        "below, each takes Django's own: `-v {0,1,2,3}`, `--settings`, `--pythonpath`, `--traceback`,",
        "`--no-color`, `--force-color` (and most `--skip-checks`). Django's and the packages' commands",
        "(`migrate`, `createsuperuser`, `drf_create_token`, `axes_reset`, `spectacular`, …) are documented by them.",
        "",
        "| command | app | what it does |",
        "| --- | --- | --- |",
    ]
    sections = []
    for name, app in commands:
        command = load_command_class(app, name)
        summary = " ".join(str(command.help).split()) or "(no description)"
        first = summary.split(". ")[0].rstrip(".").replace("|", "\\|")
        parts.append(f"| [`{name}`](#{name}) | {app} | {first} |")
        help_text = _strip_common(command.create_parser("manage.py", name).format_help())
        sections += [f"## {name}", "", "```text", help_text, "```", ""]
    return "\n".join([*parts, "", *sections])


def api_page() -> str:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    rows = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            permissions = ", ".join(operation.get("x-permissions", [])) or "none"
            summary = " ".join((operation.get("description") or "").split())
            first = summary.split(". ")[0].rstrip(".").replace("|", "\\|")
            if first.startswith("Who may call it"):
                first = ""
            rows.append(f"| `{method.upper()}` | `{path}` | {permissions} | {first} |")
    return "\n".join(
        [
            "# API routes",
            "",
            "<!-- Generated by docs/gen_reference.py from the OpenAPI schema; do not edit by hand. -->",
            "",
            f"Every route of the OpenAPI schema ({schema['info']['title']}, version {schema['info']['version']}),",
            "as the site serves it at `/api/schema/` (YAML; `?format=json` for JSON), with the permission",
            "classes that guard it. The full schema, with every field, is browsable at `/api/schema/docs/`;",
            "[The API](api.md) explains authentication and the common calls.",
            "",
            "| method | path | permissions | what it does |",
            "| --- | --- | --- | --- |",
            *rows,
            "",
        ]
    )


def pages() -> dict[Path, str]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    return {
        REFERENCE / "cli.md": cli_page(),
        REFERENCE / "settings.md": settings_page(),
        REFERENCE / "api-routes.md": api_page(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1, naming the pages, if a committed page is out of date")
    args = parser.parse_args()
    stale = []
    for path, text in pages().items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.relative_to(REPO))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(map(str, stale))}; run DEBUG=1 .venv/bin/python docs/gen_reference.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
