"""Which endpoints and API key variables a judge may use: checked when a judge is saved and again when a run starts.

The rules (README "Security"):
- a judge reads its key only from a variable named for an API key (`api_key_env_refusal`), never
  from this server's own secrets;
- its base URL names one of the hosts of JUDGE_BASE_URL_HOSTS (`base_url_refusal`; by default the
  hosts of the configured endpoints, JUDGE_ENDPOINTS), and its text names no address the outbound
  policy refuses (`judges.outbound.url_refusal`; every connection is checked again when made);
- only a superuser, or a command run on the server, types a base URL and a key variable; other
  staff choose one of the configured endpoints (`endpoint_refusal`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from judges.keys import ENV_NAME, is_api_key_variable
from judges.outbound import url_refusal


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
    if is_api_key_variable(name, settings.JUDGE_API_KEY_ENVS):
        return ""
    return (
        f"The API key variable must be {rule}: other variables, such as SECRET_KEY or DATABASE_URL, "
        "hold this server's own secrets and are never sent to an endpoint."
    )


def unprintable_refusal(url: str) -> str:
    """Why `url` cannot be a base URL for what it holds that one cannot see (a control character, a
    space, a line break, an invisible format character), or "". Named by code point and position,
    since it cannot be shown."""
    for position, char in enumerate(url, start=1):
        if not char.isprintable() or char.isspace():
            return (
                f"The base URL holds an unprintable character (U+{ord(char):04X} at position {position}); "
                "type it again without spaces, tabs, line breaks or control characters."
            )
    return ""


def base_url_refusal(url: str) -> str:
    """Why a judge may not call `url`, or "": its host must be in JUDGE_BASE_URL_HOSTS (`*`: any host),
    and its text must name no address the outbound policy refuses, nor any character one cannot see."""
    if unseen := unprintable_refusal(url):
        return unseen
    hosts = {host.lower() for host in settings.JUDGE_BASE_URL_HOSTS}
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    if "*" not in hosts and host not in hosts:
        listed = ", ".join(sorted(hosts)) or "none"
        return f"The base URL's host '{host}' is not one of JUDGE_BASE_URL_HOSTS ({listed})."
    return url_refusal(url, settings.JUDGE_ALLOW_ADDRESSES)


def endpoint_names() -> list[str]:
    return [endpoint["name"] for endpoint in settings.JUDGE_ENDPOINTS]


def configured_endpoint(name: str) -> dict | None:
    """The configured endpoint (JUDGE_ENDPOINTS) of that name: {"name", "base_url", "api_key_env"}."""
    return next((endpoint for endpoint in settings.JUDGE_ENDPOINTS if endpoint["name"] == name), None)


def endpoint_of(base_url: str, api_key_env: str) -> dict | None:
    """The configured endpoint with exactly this base URL and key variable, if any."""
    base_url = base_url.rstrip("/")
    return next((e for e in settings.JUDGE_ENDPOINTS if e["base_url"] == base_url and e["api_key_env"] == api_key_env), None)


def endpoint_refusal(*, may_type: bool, base_url: str, api_key_env: str) -> str:
    """Why someone who may not type a base URL and a key variable (`may_type` False: staff who are
    not superusers) may not give these, or "": they must be those of a configured endpoint."""
    if may_type or endpoint_of(base_url, api_key_env) is not None:
        return ""
    names = ", ".join(endpoint_names()) or "none is configured"
    return (
        "Only a superuser sets a judge's base URL and API key variable, since the server sends the key there. "
        f"Choose one of the endpoints configured on the server (JUDGE_ENDPOINTS: {names})."
    )
