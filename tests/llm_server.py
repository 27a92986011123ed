"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

The judge code talks to it through the real ``openai`` client over real HTTP, so
retries, timeouts, status codes and headers are exercised as they would be
against a provider; only the model is fake.

    with FakeLLM(latency=0.2) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        server.script("500", ("429", 2), "truncated")   # the next three requests fail
        ...

Answers: the criterion keys are read from the last block of ``- <key>: <text>``
lines in the last user message (the form ``judges.protocol.build_request``
writes; articles come earlier, so a list item such as ``- born: 1950`` in an
article does not count), and each gets ``policy(key, user_message)``, by default
a hash of the key and the first 200 characters of the user message ("1" or "2",
never "tie", so it is valid whether or not ties are allowed).

Faults (``script``), consumed one per request in arrival order:
``"500"``, ``"400"`` (a bad request that names no parameter), ``("429", seconds)`` (with ``Retry-After``
in seconds; ``("429", seconds, "date")`` gives it as an HTTP date that many seconds ahead), ``"timeout"`` (the reply is
held ``hang_seconds``, 5 s by default, longer than a test client's timeout),
``"truncated"``, ``"wrong_count"``, ``"bad_winner"``, ``"not_json"``, ``"no_choices"``.
The last five are 200 answers with unusable content and, like any billed answer,
carry usage; ``"no_choices"`` is no completion at all but an error object, as some
proxies send with a 200.

Bookkeeping: ``requests`` and ``authorizations`` in arrival order, ``arrivals`` (the
server's ``time.monotonic()`` as each request came in) and ``max_in_flight``, the most
chat requests the server held at once, so tests count concurrency instead of timing it.

``refuse_schema = True`` makes it answer every request that carries a
``response_format`` with a 400 naming it, as endpoints without structured output do.

Billing and ids, as a provider's usage export would show them: every response carries
an ``x-request-id`` header (``req-fake-<n>``) and every completion an ``id``
(``chatcmpl-fake-<n>``); ``answered`` lists the completions the server produced (and so
would have billed), each ``{"id", "request_id", "client_request_id", "prompt_tokens",
"cached_tokens", "completion_tokens"}``, recorded before the reply is written, so a
client killed while the reply travels still owes it; ``client_request_ids`` holds the
``X-Client-Request-Id`` header of each request ("" when absent).

``rate_limit = (n, seconds)`` makes it answer 429 (with ``Retry-After``) to any chat
request that would be the (n+1)-th to arrive within ``seconds``, as a provider's
requests-per-minute limit does; ``rate_limited`` counts those answers. Refused requests
do not count towards the limit.

``shared_server()`` hands out one server for the whole process; the ``llm_server``
fixture in tests/conftest.py resets it before and after each test.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


__all__ = ["FakeLLM", "FAULTS", "default_policy", "shared_server"]

FAULTS = ("500", "400", "429", "timeout", "truncated", "wrong_count", "bad_winner", "not_json", "no_choices")
MODEL_ID = "fake-judge"
_CRITERION_LINE_RE = re.compile(r"^- ([A-Za-z0-9_.-]+): ", re.MULTILINE)


def default_policy(criterion_key: str, user_message: str) -> str:
    digest = hashlib.sha256(f"{criterion_key}\0{user_message[:200]}".encode("utf-8")).digest()
    return "1" if digest[0] % 2 == 0 else "2"


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": …}]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else json.dumps(content)


def criterion_keys(user_message: str) -> list[str]:
    """Keys of the last contiguous block of ``- <key>: `` lines."""
    blocks: list[list[str]] = []
    previous_end = None
    for match in _CRITERION_LINE_RE.finditer(user_message):
        line_start = match.start()
        contiguous = previous_end is not None and user_message.count("\n", previous_end, line_start) == 1
        if contiguous:
            blocks[-1].append(match.group(1))
        else:
            blocks.append([match.group(1)])
        previous_end = user_message.find("\n", match.end())
        if previous_end == -1:
            previous_end = len(user_message)
    return blocks[-1] if blocks else []


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # 32+ concurrent clients must not be refused


class FakeLLM:
    hang_seconds = 5.0

    def __init__(self, *, latency: float = 0.0, policy: Callable[[str, str], str] | None = None):
        self._initial = (latency, policy)
        self.latency = latency
        self.policy = policy or default_policy
        self.cached_tokens = 0
        self.refuse_schema = False
        self.requests: list[dict] = []
        self.authorizations: list[str] = []  # the Authorization header of each request, in order
        self.arrivals: list[float] = []  # time.monotonic() as each request arrived, in order
        self.in_flight = 0
        self.max_in_flight = 0
        self.base_url = ""
        self._faults: deque = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0
        self.answered: list[dict] = []
        self.client_request_ids: list[str] = []
        self.rate_limit: tuple[int, float] | None = None
        self.rate_limited = 0
        self._accepted: deque = deque()  # arrival times of the chat requests let through the rate limit

    # -------------------------------------------------------------- lifecycle

    def __enter__(self) -> "FakeLLM":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()  # releases requests held by "timeout"
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def script(self, *faults) -> None:
        queued = []
        for fault in faults:
            name = fault[0] if isinstance(fault, tuple) else fault
            bad_tuple = isinstance(fault, tuple) and (name != "429" or len(fault) not in (2, 3) or (len(fault) == 3 and fault[2] != "date"))
            if name not in FAULTS or bad_tuple:
                raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
            queued.append(("429", 1) if fault == "429" else fault)
        with self._lock:
            self._faults.extend(queued)

    def reset(self) -> None:
        """Forget requests and queued faults; back to the constructor's latency and policy."""
        with self._lock:
            self.requests.clear()
            self.authorizations.clear()
            self.arrivals.clear()
            self.in_flight = self.max_in_flight = 0
            self._faults.clear()
            self.answered.clear()
            self.client_request_ids.clear()
            self._accepted.clear()
            self.rate_limited = 0
        self.rate_limit = None
        self.latency, policy = self._initial
        self.policy = policy or default_policy
        self.cached_tokens = 0
        self.refuse_schema = False

    # -------------------------------------------------------------- answers

    def _next_fault(self):
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _record(self, body: dict, authorization: str, client_request_id: str = "") -> int:
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)
            self.client_request_ids.append(client_request_id)
            self.arrivals.append(time.monotonic())
            self._ids += 1
            return self._ids

    def _over_the_limit(self) -> float | None:
        """Seconds until a slot frees when this request is over `rate_limit`, else None (and it counts)."""
        if self.rate_limit is None:
            return None
        limit, window = self.rate_limit
        now = time.monotonic()
        with self._lock:
            while self._accepted and self._accepted[0] <= now - window:
                self._accepted.popleft()
            if len(self._accepted) >= limit:
                self.rate_limited += 1
                return max(0.0, self._accepted[0] + window - now)
            self._accepted.append(now)
            return None

    def _bill(self, completion: dict, number: int, client_request_id: str) -> None:
        usage = completion.get("usage") or {}
        with self._lock:
            self.answered.append(
                {
                    "id": completion.get("id", ""),
                    "request_id": f"req-fake-{number}",
                    "client_request_id": client_request_id,
                    "prompt_tokens": usage.get("prompt_tokens", 0),
                    "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
                    "completion_tokens": usage.get("completion_tokens", 0),
                }
            )

    def _completion(self, body: dict, number: int, fault) -> dict:
        messages = body.get("messages") or []
        user_message = next(
            (_text(message.get("content")) for message in reversed(messages) if message.get("role") == "user"), ""
        )
        verdicts = [
            {"criterion": key, "winner": self.policy(key, user_message), "reason": f"Fake reason for {key}."}
            for key in criterion_keys(user_message)
        ]
        if fault == "wrong_count" and verdicts:
            verdicts.pop()
        if fault == "bad_winner" and verdicts:
            verdicts[0]["winner"] = "3"
        content = json.dumps({"verdicts": verdicts})
        if fault == "truncated":
            content = content[: len(content) // 2]
        if fault == "not_json":
            content = "Both articles have their merits, but on balance I would lean towards the first one."
        prompt_tokens = math.ceil(sum(len(_text(message.get("content"))) for message in messages) / 4)
        completion_tokens = math.ceil(len(content) / 4)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": min(self.cached_tokens, prompt_tokens)},
        }
        if fault == "no_choices":
            return {"id": f"chatcmpl-fake-{number}", "object": "chat.completion", "error": {"message": "the upstream model is overloaded"}, "usage": usage}
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_ID,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }

    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
            # The reply goes out in two writes; with Nagle's algorithm and delayed ACKs each
            # answer would wait ~40 ms, which no real endpoint does.
            disable_nagle_algorithm = True

            def log_message(self, format, *args):  # quiet
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if getattr(self, "number", None):
                        self.send_header("x-request-id", f"req-fake-{self.number}")
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (timeout)

            def _error(self, status: int, message: str, kind: str, headers: dict | None = None) -> None:
                self._send(status, {"error": {"message": message, "type": kind, "code": None, "param": None}}, headers)

            def do_GET(self):
                self.number = None
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "tests"}]})
                else:
                    self._error(404, f"no route {self.path}", "invalid_request_error")

            def do_POST(self):
                self.number = None
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._error(404, f"no route {self.path}", "invalid_request_error")
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._error(400, "the body is not JSON", "invalid_request_error")
                    return
                client_request_id = self.headers.get("X-Client-Request-Id", "")
                number = self.number = fake._record(body, self.headers.get("Authorization", ""), client_request_id)
                self.client_request_id = client_request_id
                wait = fake._over_the_limit()
                if wait is not None:
                    self._error(429, "too many requests per minute", "rate_limit_error", {"Retry-After": str(max(1, math.ceil(wait)))})
                    return
                fault = fake._next_fault()
                with fake._lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    self._answer(body, number, fault)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def _answer(self, body: dict, number: int, fault) -> None:
                if fake.latency:
                    time.sleep(fake.latency)
                if fake.refuse_schema and "response_format" in body:
                    self._error(400, "response_format of type json_schema is not supported by this model", "invalid_request_error")
                elif fault == "500":
                    self._error(500, "the fake server failed on purpose", "server_error")
                elif fault == "400":
                    self._error(400, "the prompt is longer than this model's context window", "invalid_request_error")
                elif isinstance(fault, tuple):
                    after = formatdate(time.time() + fault[1], usegmt=True) if len(fault) == 3 else str(fault[1])
                    self._error(429, "rate limited on purpose", "rate_limit_error", {"Retry-After": after})
                elif fault == "timeout":
                    fake._stopping.wait(fake.hang_seconds)
                    self._complete(body, number, None)
                else:
                    self._complete(body, number, fault)

            def _complete(self, body: dict, number: int, fault) -> None:
                completion = fake._completion(body, number, fault)
                fake._bill(completion, number, self.client_request_id)
                self._send(200, completion)

        return Handler


_shared: FakeLLM | None = None
_shared_lock = threading.Lock()


def shared_server() -> FakeLLM:
    """One server for the whole process, started on first use (daemon threads end with it)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = FakeLLM()
            _shared.start()
        return _shared
