"""The one rule for a judge's API key variable, pure (settings read it too, before Django is set up).

A judge's key is sent as a bearer token to its base URL, so it is read only from a variable named
for an API key (ending in _API_KEY) or listed in JUDGE_API_KEY_ENVS, and never from this server's
own secrets.
"""

from __future__ import annotations

import re

ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
API_KEY_ENV = re.compile(r"[A-Z][A-Z0-9_]*_API_KEY")
SERVER_SECRETS = frozenset({"SECRET_KEY", "DATABASE_URL"})


def is_api_key_variable(name: str, extra: list[str] | tuple[str, ...]) -> bool:
    """Whether a judge may read its key from the variable `name`: a name ending in _API_KEY, or one of `extra`."""
    return name not in SERVER_SECRETS and (API_KEY_ENV.fullmatch(name) is not None or name in extra)
