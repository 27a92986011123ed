"""Settings from environment variables: every variable is read through one of these helpers.

A missing or bad value raises ImproperlyConfigured with one line that names the variable and says
what it takes; `manage.py` prints that line alone (no traceback) and exits with status 1.
No Django here beyond that exception, so `config/settings.py` stays a list of plain assignments.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from judges.keys import ENV_NAME, SERVER_SECRETS, is_api_key_variable

ENDPOINT_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,49}")
DEVELOPMENT_KEY = "insecure-development-key-only-used-when-DEBUG-is-on"


def _raw(name: str) -> str | None:
    """The variable's value, or None when it is unset or blank."""
    value = os.environ.get(name)
    return None if value is None or value.strip() == "" else value


def env_bool(name: str, default: bool) -> bool:
    raw = _raw(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false (also 1/0, yes/no, on/off), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        bounds = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
        raise ImproperlyConfigured(f"{name} must be a whole number {bounds}, got {raw!r}")
    return value


def env_list(name: str, default: str) -> list[str]:
    """Comma-separated items, blanks dropped."""
    raw = os.environ.get(name)
    return [item.strip() for item in (default if raw is None else raw).split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = _raw(name)
    if raw is None:
        return default
    value = raw.strip().upper()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be {', '.join(choices[:-1])} or {choices[-1]}, got {raw!r}")
    return value


def _url_problem(value: str) -> str:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "it must start with http:// or https:// and name a host"
    return ""


def env_url(name: str, default: str = "") -> str:
    """An http(s) address without its trailing slash; "" when unset and no default."""
    raw = _raw(name)
    if raw is None:
        return default
    value = raw.strip().rstrip("/")
    if problem := _url_problem(value):
        raise ImproperlyConfigured(
            f"{name} must be an http:// or https:// address such as https://pairwise.example.org, got {raw!r} ({problem})"
        )
    return value


def env_redis_url(name: str) -> str:
    """A Redis server's address (redis://, rediss:// or unix://); "" when unset."""
    raw = _raw(name)
    if raw is None:
        return ""
    value = raw.strip()
    if not value.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(f"{name} must start with redis://, rediss:// or unix://, got {raw!r}")
    return value


def env_path(name: str, default: Path) -> Path:
    raw = _raw(name)
    return default if raw is None else Path(raw.strip())


def env_database(name: str, default: str) -> dict:
    """Django's DATABASES["default"] from a URL (dj-database-url), health-checked before reuse."""
    raw = _raw(name)
    url = default if raw is None else raw.strip()
    try:
        return dj_database_url.parse(url, conn_health_checks=True)
    except Exception as exc:  # the library raises several kinds for a bad URL
        raise ImproperlyConfigured(
            f"{name} must be a database URL such as postgres://user@127.0.0.1:5432/pairwise or sqlite:////path/db.sqlite3 ({exc})"
        ) from None


def env_secret_key(name: str, *, debug: bool, key_file: Path) -> tuple[str, str]:
    """(key, where it came from): the variable; else the demo's key file (`make demo` writes it and
    serves the demo with it, so set-password links made from a shell work on the demo); else, with
    DEBUG on, a fixed development key; else ("", "none"). With no key, only what signs fails
    (serving pages, set-password links), each with its own message; every other command runs."""
    raw = _raw(name)
    if raw is not None:
        return raw, "environment"
    try:
        from_file = key_file.read_text(encoding="utf-8").strip() if key_file.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ImproperlyConfigured(f"{name} is not set and the demo's key file {key_file} cannot be read ({exc})") from None
    if from_file:
        return from_file, "demo key file"
    if debug:
        return DEVELOPMENT_KEY, "development key"
    return "", "none"


# The demo's settings for its commands (issue 41): the variables `make demo` serves the demo with, which
# `make demo-data` writes beside the key file, so that `run_judges` and `add_judge --endpoint loopback`
# work from a shell as they do on the demo's pages.
DEMO_ENV_VARIABLES = ("JUDGE_ENDPOINTS", "JUDGE_ALLOW_ADDRESSES", "LOOPBACK_API_KEY", "LOCAL_JUDGE_API_KEY")


def load_demo_env(path: Path) -> list[str]:
    """Sets the variables of the demo's settings file (`NAME=value` lines, only `DEMO_ENV_VARIABLES`)
    that the environment does not set; returns their names. A missing file sets nothing."""
    if not path.is_file():
        return []
    loaded = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ImproperlyConfigured(f"the demo's settings file {path} cannot be read ({exc})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or name not in DEMO_ENV_VARIABLES:
            raise ImproperlyConfigured(f"{path}:{number}: expected NAME=value with NAME one of {', '.join(DEMO_ENV_VARIABLES)}")
        if name not in os.environ:
            os.environ[name] = value
            loaded.append(name)
    return loaded


def env_networks(name: str, default: str = "") -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Comma-separated addresses or networks (127.0.0.1, 10.0.0.0/8, ::1)."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} takes IP addresses or networks, comma-separated (e.g. 127.0.0.1,10.0.0.0/8), got {item!r}"
            ) from None
    return networks


def env_variable_names(name: str, default: str = "") -> list[str]:
    """Comma-separated names of environment variables, never this server's own secrets."""
    names = env_list(name, default)
    for item in names:
        if not ENV_NAME.fullmatch(item):
            raise ImproperlyConfigured(f"{name} takes names of environment variables (capital letters, digits and _), got {item!r}")
    if SERVER_SECRETS & set(names):
        raise ImproperlyConfigured(f"{name} must not name SECRET_KEY or DATABASE_URL: a judge sends its key to its base URL")
    return names


def env_endpoints(name: str, default: str, *, key_variables: list[str]) -> list[dict]:
    """Judge endpoints configured on the server: comma-separated entries of `name base_url KEY_VARIABLE`,
    e.g. `openai https://api.openai.com/v1 OPENAI_API_KEY`. Each becomes {"name", "base_url", "api_key_env"}."""
    endpoints: list[dict] = []
    for entry in env_list(name, default):
        fields = entry.split()
        if len(fields) != 3:
            raise ImproperlyConfigured(
                f"{name} takes comma-separated entries of 'name base_url KEY_VARIABLE' "
                f"(e.g. 'openai https://api.openai.com/v1 OPENAI_API_KEY'), got {entry!r}"
            )
        label, url, variable = fields
        if not ENDPOINT_NAME.fullmatch(label):
            raise ImproperlyConfigured(f"{name}: an endpoint's name is 1 to 50 lowercase letters, digits, '.', '_' or '-', got {label!r}")
        if problem := _url_problem(url):
            raise ImproperlyConfigured(f"{name}: the endpoint '{label}' has a bad base URL {url!r} ({problem})")
        if not is_api_key_variable(variable, key_variables):
            raise ImproperlyConfigured(
                f"{name}: the endpoint '{label}' reads its key from {variable!r}, which is not a name ending in _API_KEY "
                "nor one listed in JUDGE_API_KEY_ENVS"
            )
        if any(e["name"] == label for e in endpoints):
            raise ImproperlyConfigured(f"{name}: the endpoint name '{label}' is given twice")
        endpoints.append({"name": label, "base_url": url.rstrip("/"), "api_key_env": variable})
    return endpoints


def env_hosts(name: str, default: list[str]) -> list[str]:
    """Comma-separated host names, lowercased; `*` alone allows any host. Unset or blank: `default`."""
    raw = _raw(name)
    if raw is None:
        return sorted(set(default))
    hosts = [host.lower() for host in env_list(name, "")]
    for host in hosts:
        if host != "*" and not re.fullmatch(r"[a-z0-9._:\-\[\]]+", host):
            raise ImproperlyConfigured(f"{name} takes host names such as api.openai.com, comma-separated, or * for any host, got {host!r}")
    if "*" in hosts and len(hosts) > 1:
        raise ImproperlyConfigured(f"{name}: * (any host) stands alone, got {raw!r}")
    return hosts


NO_KEY = (
    "SECRET_KEY is not set. It signs sessions and set-password links, so set it to the served site's own key "
    "(export SECRET_KEY=...; `make demo` keeps the demo's in .demo-secret-key, which is read when SECRET_KEY is unset)."
)


def serving_key_refusal(source: str) -> str:
    """Why the site may not be served with a key from `source` (SECRET_KEY_SOURCE), or "".

    Serving needs the key in the environment (or DEBUG on): a site started by hand must not pick up
    a demo's key file left in the checkout."""
    if source in ("environment", "development key"):
        return ""
    return "SECRET_KEY must be set in the environment to serve the site (DEBUG is off): it signs sessions and CSRF tokens."
