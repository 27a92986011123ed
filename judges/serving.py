"""What an endpoint serves: its default judge settings, the model it says it serves, and how many
requests it serves at once (docs/how-to/local-judge.md).

Defaults per endpoint (`endpoint_defaults`): a hosted endpoint answers one category of a real pair
in seconds and serves many requests at once, so judges there wait 120 s for an answer and runs keep
4 requests in flight. A model on this machine's CPU (an endpoint on a loopback address: llama.cpp's
server, Ollama, vLLM on CPU) needs minutes for one category of a real pair (docs/how-to/local-judge.md
measures it) and serves as many requests at once as it has slots, 1 unless started with more: judges
there wait 600 s, and runs keep 1 request in flight. A run that keeps more in flight than the server
has slots queues the rest at the server, where their time out runs while they wait:
`concurrency_warning` says so before the run starts.

The probes are best-effort GETs through the judge's own client (the outbound policy applies) with a
short timeout: `served_models` reads ``/models`` (OpenAI's list; llama.cpp adds each model's
aliases), `server_slots` llama.cpp's ``/props`` (``total_slots``) or ``/slots`` (one entry per
slot) at the server's root. An endpoint without them (hosted providers) gives None: nothing is known,
nothing is claimed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai

__all__ = [
    "EndpointDefaults", "concurrency_warning", "endpoint_defaults", "is_local", "judge_concurrency_warning", "served_models", "server_slots",
]  # fmt: skip

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
PROBE_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class EndpointDefaults:
    timeout_seconds: float
    concurrency: int
    why: str


HOSTED = EndpointDefaults(120.0, 4, "a hosted endpoint answers in seconds and serves many requests at once")
LOCAL = EndpointDefaults(
    600.0, 1, "a model on this machine's CPU needs minutes for one category of a real pair and serves one request per slot"
)


def is_local(base_url: str) -> bool:
    try:
        host = (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return False
    return host in LOCAL_HOSTS or host.startswith("127.")


def endpoint_defaults(base_url: str) -> EndpointDefaults:
    return LOCAL if is_local(base_url) else HOSTED


def _root(base_url: str) -> str:
    """The server's root: llama.cpp serves /props and /slots beside /v1, not under it."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[: -len("/v1")] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _get(client: openai.OpenAI, url: str):
    try:
        response = client.with_options(timeout=PROBE_TIMEOUT_SECONDS).get(url, cast_to=openai.APIResponse[bytes])
        return json.loads(response.parse())
    except (openai.APIError, httpx2.HTTPError, ValueError, UnicodeDecodeError):
        return None


def served_models(client: openai.OpenAI) -> list[str] | None:
    """The model ids (and aliases) the endpoint lists at /models; None when it lists none."""
    data = _get(client, "/models")
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    names: list[str] = []
    for entry in entries:
        if isinstance(entry, dict):
            for name in [entry.get("id"), *(entry.get("aliases") or [])]:
                if isinstance(name, str) and name and name not in names:
                    names.append(name)
    return names or None


def server_slots(client: openai.OpenAI, base_url: str) -> int | None:
    """How many requests the server serves at once, when it says (llama.cpp); None otherwise."""
    root = _root(base_url)
    props = _get(client, f"{root}/props")
    if isinstance(props, dict):
        total = props.get("total_slots")
        if isinstance(total, int) and not isinstance(total, bool) and total > 0:
            return total
    slots = _get(client, f"{root}/slots")
    if isinstance(slots, list) and slots:
        return len(slots)
    return None


def concurrency_warning(*, client: openai.OpenAI, base_url: str, concurrency: int, timeout_seconds: float) -> str:
    """A warning when `concurrency` exceeds the slots the server reports, else ""."""
    slots = server_slots(client, base_url)
    if slots is None or concurrency <= slots:
        return ""
    return (
        f"Concurrency {concurrency} exceeds the {slots} request(s) the server at {base_url} serves at once (its slots): "
        f"the other {concurrency - slots} wait in its queue, and their {timeout_seconds:g} s timeout runs while they wait. "
        f"Use a concurrency of {slots} (run_judges --concurrency {slots}), or start the server with more slots."
    )


def judge_concurrency_warning(*, judge, concurrency: int) -> str:
    """`concurrency_warning` for a saved LLM judge, through its own client and key; "" when the judge
    is offline, its key is unset or its URL refused (the run itself then says why)."""
    from django.conf import settings

    from judges.endpoints import base_url_refusal
    from judges.transport import openai_client

    secret = os.environ.get(judge.api_key_env or "", "")
    if judge.kind != "llm" or not secret or base_url_refusal(judge.base_url):
        return ""
    client = openai_client(judge, secret, 1, settings.JUDGE_ALLOW_ADDRESSES)
    return concurrency_warning(client=client, base_url=judge.base_url, concurrency=concurrency, timeout_seconds=judge.timeout_seconds)
