"""Which endpoints and API key variables a judge may use: checked when a judge is saved and again when a run starts."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.conf import settings

ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
# The key variable is sent as a bearer token to the judge's URL: only variables named for an
# API key may be read, never this server's own secrets (SECRET_KEY, DATABASE_URL) or anything else.
API_KEY_ENV = re.compile(r"[A-Z][A-Z0-9_]*_API_KEY")


def api_key_env_refusal(name: str) -> str:
    """Why the variable `name` may not be read as a judge's API key, or "" when it may.

    The value is never repeated in the message: what was typed may be a pasted key.
    """
    rule = (
        "a name of capital letters, digits and _ ending in _API_KEY (e.g. OPENAI_API_KEY, DEEPSEEK_API_KEY), "
        "or one listed in the JUDGE_API_KEY_ENVS setting"
    )
    if not ENV_NAME.fullmatch(name):
        return f"--api-key-env takes the NAME of the environment variable holding the key ({rule}), never the key itself."
    if API_KEY_ENV.fullmatch(name) or name in settings.JUDGE_API_KEY_ENVS:
        return ""
    return (
        f"The API key variable must be {rule}: other variables, such as SECRET_KEY or DATABASE_URL, "
        "hold this server's own secrets and are never sent to an endpoint."
    )


def base_url_refusal(url: str) -> str:
    """Why a judge may not call `url` under the JUDGE_BASE_URL_HOSTS setting, or "" (no setting: any host)."""
    hosts = {host.lower() for host in settings.JUDGE_BASE_URL_HOSTS}
    if not hosts:
        return ""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    if host in hosts:
        return ""
    return f"The base URL's host '{host}' is not one of JUDGE_BASE_URL_HOSTS ({', '.join(sorted(hosts))})."
