"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

The judge code talks to it through the real ``openai`` client over real HTTP, so
retries, timeouts, status codes and headers are exercised as they would be
against a provider; only the model is fake.

    with FakeLLM(latency=0.2) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        server.script("500", ("429", 2), "truncated")   # the next three requests fail
        ...

Answers: the criterion keys are read from the last block of ``- <key>: <text>``
lines in the last user message that has such lines (a retry's conversation ends with what was wrong
with the answer before: ``protocols.base.retry_messages``) (the form ``protocols.pairwise.build_request``
writes; articles come earlier, so a list item such as ``- born: 1950`` in an
article does not count), and each gets ``policy(key, user_message)``, by default
a hash of the key and the first 200 characters of the user message ("1" or "2",
never "tie", so it is valid whether or not ties are allowed).

Token probabilities: a request with ``logprobs: true`` gets the choice's ``logprobs.content``
(``token_logprobs``), as OpenAI returns it: each winner's value is a token whose
``top_logprobs`` (at most the request's ``top_logprobs``) give it ``confidence(key,
user_message)`` (``default_confidence``, 0.5 to 1, unless a test sets another) and the other
position the rest.

A vote on an agent's step (``protocols.step_vote``): a request whose JSON schema is named ``step_vote``,
or whose user message holds "The step to vote on:", is answered ``{"vote": step_policy(user_message),
"reason": …}``, by default ``default_step_vote`` (a hash of the step's own text: "up" two times in
three); ``step_requests`` counts them.

The guess question (``protocols.pairwise.guess``): a request whose JSON schema is named ``guess``, or
whose user message asks "Which article do you think is the …", is answered ``{"guess": guess_policy(
user_message)}``, by default ``default_guess`` (the longer article is the reference: "first" or
"second"; "unknown" when they are as long); a test sets ``guess_policy`` to answer what it needs.
``guess_requests`` counts the guess requests answered.

One-article protocols (checklist, rating, count, nominal) and the ranking: a request whose JSON schema is
named after one of them is answered ``{"answers": [{"criterion", "reason", "answer"}]}``, each answer a
value the schema allows (a ranking's: every article number once, one per place, in an order drawn from
the key and the message), or ``one_article_policy(key, user_message)`` when that is set (None leaves
the answer out), so tests can send what a bad model would.

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

``slots = n`` makes ``GET /props`` (at the server's root) answer ``{"total_slots": n}``, as
llama.cpp's server reports how many requests it serves at once; unset, /props is a 404, as at a
hosted provider.

``refuse_schema = True`` makes it answer every request that carries a
``response_format`` with a 400 naming it, as endpoints without structured output do.
``accepted_keys`` (a set; None: any key) makes it answer a chat request whose bearer token
is not in it with a 401, and ``models`` (a set; None: any model) a request for another model
with a 404 naming the model, as OpenAI does for a wrong key or an unknown model.

Billing and ids, as a provider's usage export would show them: every response carries
an ``x-request-id`` header (``req-fake-<n>``) and every completion an ``id``
(``chatcmpl-fake-<n>``); ``answered`` lists the completions the server produced (and so
would have billed), each ``{"id", "request_id", "client_request_id", "prompt_tokens",
"cached_tokens", "completion_tokens"}``, recorded before the reply is written, so a
client killed while the reply travels still owes it; ``client_request_ids`` holds the
``X-Client-Request-Id`` header of each request ("" when absent). While a policy runs,
``answering.client_request_id`` is the header of the request it answers (one per server thread).

``rate_limit = (n, seconds)`` makes it answer 429 (with ``Retry-After``) to any chat
request that would be the (n+1)-th to arrive within ``seconds``, as a provider's
requests-per-minute limit does; ``rate_limited`` counts those answers. Refused requests
do not count towards the limit.

The Batch API, as OpenAI (and Azure OpenAI, and others that mimic it) serve it:
``POST /v1/files`` (a multipart upload, purpose ``batch``), ``GET /v1/files/{id}`` and
``/v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches``
(newest first, with ``limit`` and ``after``, each batch with its ``metadata``) and
``POST /v1/batches/{id}/cancel``. A batch is ``validating`` when made, ``in_progress``
from its first retrieve, and answers its lines on the retrieve after ``batch_polls``
retrieves (1 by default: the second; 0: the first) once ``batch_delay`` seconds have passed,
unless ``hold_batches`` is set, which keeps every batch in progress until it is unset.
Each line is answered as a synchronous request would be, in file order, with the same
``policy``, ``refuse_schema`` and ``script`` of faults (so the same seed gives the same
verdicts): answers go to the output file, ``"500"``/``"400"``/``"429"`` faults and refused
schemas to the error file as lines with that status (``"timeout"`` gives 408), in OpenAI's
format ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``.
Every answered line is appended to ``answered`` with ``"batch": True`` and its ``custom_id``
as ``client_request_id``, and its body to ``batch_requests``. ``expire_batches = n`` ends
batches ``expired`` after answering their first n lines (the rest go to the error file with
``response: null`` and the error ``batch_expired``); a cancelled batch answers nothing.
``batch_submissions`` lists every batch made (``{"id", "metadata", "custom_ids"}``), so a test
counts submissions; ``hang_batch_create`` makes the server hold its reply to ``POST
/v1/batches`` after the batch is made (until ``release_batch_create()`` or ``hang_seconds``),
the window in which a killed client has a batch at the provider and no id for it.

``shared_server()`` hands out one server for the whole process; the ``llm_server``
fixture in tests/conftest.py resets it before and after each test.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.llm_batches import BatchAPI
from tests.llm_replies import (
    content_text,
    criterion_keys,
    default_confidence,
    default_guess,
    default_policy,
    default_step_vote,
    is_guess,
    is_step_vote,
    token_logprobs,
)

__all__ = [
    "FakeLLM",
    "FAULTS",
    "criterion_keys",
    "default_confidence",
    "default_guess",
    "default_policy",
    "shared_server",
    "token_logprobs",
]

FAULTS = ("500", "400", "429", "timeout", "truncated", "wrong_count", "bad_winner", "not_json", "no_choices")
MODEL_ID = "fake-judge"
BATCH_ENDED = ("completed", "expired", "failed", "cancelled")
# The schema names of the protocols whose replies are answers (protocols/one_article.py's, and the
# ranking's), answered as {"answers": [...]}.
ONE_ARTICLE_SCHEMAS = ("checklist", "rating", "count", "nominal", "ranking")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # 32+ concurrent clients must not be refused


class FakeLLM(BatchAPI):
    hang_seconds = 5.0

    def __init__(self, *, latency: float = 0.0, policy: Callable[[str, str], str] | None = None):
        self._initial = (latency, policy)
        self.latency = latency
        self.policy = policy or default_policy
        self.confidence = default_confidence
        self.one_article_policy: Callable[[str, str], object] | None = None
        self.guess_policy: Callable[[str], str] = default_guess
        self.guess_requests = 0
        self.step_policy: Callable[[str], str] = default_step_vote
        self.step_requests = 0
        self.cached_tokens = 0
        self.refuse_schema = False
        self.accepted_keys: set[str] | None = None
        self.models: set[str] | None = None
        self.slots: int | None = None  # set: GET /props answers {"total_slots": slots}, as llama.cpp's server does
        self.requests: list[dict] = []
        self.authorizations: list[str] = []  # the Authorization header of each request, in order
        self.arrivals: list[float] = []  # time.monotonic() as each request arrived, in order
        self.in_flight = 0
        self.max_in_flight = 0
        self.base_url = ""
        self._faults: deque = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._release = threading.Event()  # set: requests held by "timeout" go on (a new one after each reset)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0
        self.answered: list[dict] = []
        self.client_request_ids: list[str] = []
        self.answering = threading.local()  # the request each server thread is answering (see the docstring)
        self.rate_limit: tuple[int, float] | None = None
        self.rate_limited = 0
        self._accepted: deque = deque()  # arrival times of the chat requests let through the rate limit
        # The Batch API (see the module docstring).
        self.batch_polls = 1
        self.batch_delay = 0.0
        self.hold_batches = False
        self.expire_batches: int | None = None
        self.hang_batch_create = False
        self.batch_submissions: list[dict] = []
        self.batch_requests: list[dict] = []
        self._files: dict[str, dict] = {}  # id -> {"object": the file object, "content": bytes}
        self._batches: dict[str, dict] = {}  # id -> the batch object, in creation order
        self._batch_state: dict[str, dict] = {}  # id -> {"polls", "made", "cancel"}
        self._batch_lock = threading.Lock()  # one retrieve at a time answers a batch's lines
        self._batch_created = threading.Event()  # released: the held reply to POST /v1/batches goes out

    # -------------------------------------------------------------- lifecycle

    def __enter__(self) -> "FakeLLM":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        self._stopping.clear()
        self._release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()  # stops the server and releases requests held by "timeout"
        self._release.set()
        self._batch_created.set()
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
        """Forget requests and queued faults; back to the constructor's latency and policy. Requests
        still held by a "timeout" fault are let go first (briefly waited for), so that they cannot
        answer, or count themselves out of `in_flight`, after the reset."""
        self._release.set()
        deadline = time.monotonic() + 2.0
        while self.in_flight > 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        self._release = threading.Event()
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
            self.batch_submissions.clear()
            self.batch_requests.clear()
        with self._batch_lock:
            self._files.clear()
            self._batches.clear()
            self._batch_state.clear()
        self.batch_polls, self.batch_delay, self.hold_batches, self.expire_batches = 1, 0.0, False, None
        self.hang_batch_create = False
        self._batch_created.set()  # a reply still held goes out
        self._batch_created = threading.Event()
        self.rate_limit = None
        self.latency, policy = self._initial
        self.policy = policy or default_policy
        self.confidence = default_confidence
        self.one_article_policy = None
        self.guess_policy = default_guess
        self.guess_requests = 0
        self.step_policy = default_step_vote
        self.step_requests = 0
        self.cached_tokens = 0
        self.refuse_schema = False
        self.accepted_keys = None
        self.models = None
        self.slots = None

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

    def _bill(self, completion: dict, number: int, client_request_id: str, *, batch: bool = False) -> None:
        usage = completion.get("usage") or {}
        entry = {
            "id": completion.get("id", ""),
            "request_id": f"req-fake-{number}",
            "client_request_id": client_request_id,
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
        }
        if batch:
            entry["batch"] = True
        with self._lock:
            self.answered.append(entry)

    def _completion(self, body: dict, number: int, fault) -> dict:
        messages = body.get("messages") or []
        users = [content_text(message.get("content")) for message in messages if message.get("role") == "user"]
        # A retry's conversation ends with what was wrong, after the request's own user message.
        user_message = next((text for text in reversed(users) if criterion_keys(text)), users[-1] if users else "")
        schema = (body.get("response_format") or {}).get("json_schema") or {}
        verdicts = []
        if schema.get("name") in ONE_ARTICLE_SCHEMAS:
            content = json.dumps({"answers": self._one_article_answers(schema["schema"], user_message)})
        elif is_step_vote(schema.get("name", ""), users[0] if users else ""):
            with self._lock:
                self.step_requests += 1
            content = json.dumps({"vote": self.step_policy(users[0]), "reason": "Fake reason for the step."})
        elif is_guess(schema.get("name", ""), users[0] if users else ""):
            with self._lock:
                self.guess_requests += 1
            content = json.dumps({"guess": self.guess_policy(users[0])})
        else:
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
        prompt_tokens = math.ceil(sum(len(content_text(message.get("content"))) for message in messages) / 4)
        completion_tokens = math.ceil(len(content) / 4)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": min(self.cached_tokens, prompt_tokens)},
        }
        if fault == "no_choices":
            return {
                "id": f"chatcmpl-fake-{number}",
                "object": "chat.completion",
                "error": {"message": "the upstream model is overloaded"},
                "usage": usage,
            }
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        if body.get("logprobs") is True:
            sure = [self.confidence(v["criterion"], user_message) for v in verdicts]
            top = body.get("top_logprobs") if isinstance(body.get("top_logprobs"), int) else 0
            choice["logprobs"] = {"content": token_logprobs(content, sure, top), "refusal": None}
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_ID,
            "choices": [choice],
            "usage": usage,
        }

    def _one_article_answers(self, schema: dict, user_message: str) -> list[dict]:
        """The answers of a one-article protocol's request: ``one_article_policy(key, user_message)``
        when set (its None leaves the answer out), else a value the schema allows, drawn from a
        hash of the key and the message."""
        by_criterion = schema["properties"]["answers"]["properties"]
        answers = []
        for key in criterion_keys(user_message):
            allowed = by_criterion[key]["properties"]["answer"] if key in by_criterion else {"enum": ["?"]}
            item = {"criterion": key, "reason": f"Fake reason for {key}."}
            if self.one_article_policy is not None:
                value = self.one_article_policy(key, user_message)
            elif allowed.get("type") == "array":  # a ranking: the article numbers, one per place, in a drawn order
                numbers = list(allowed["items"]["items"]["enum"])
                random.Random(f"{key}\0{user_message[:200]}").shuffle(numbers)
                value = [[n] for n in numbers]
            else:
                digest = hashlib.sha256(f"{key}\0{user_message[:200]}".encode("utf-8")).digest()[0]
                choices = allowed.get("enum") or list(range(allowed.get("minimum", 0), allowed.get("minimum", 0) + 4))
                value = choices[digest % len(choices)]
            if value is not None:
                item["answer"] = value
            answers.append(item)
        return answers

    # -------------------------------------------------------------- the Batch API

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

            def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _error(self, status: int, message: str, kind: str, headers: dict | None = None) -> None:
                self._send(status, {"error": {"message": message, "type": kind, "code": None, "param": None}}, headers)

            def do_GET(self):
                self.number = None
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "tests"}]})
                elif self.path.rstrip("/") == "/props" and fake.slots is not None:
                    self._send(200, {"total_slots": fake.slots, "model_alias": MODEL_ID})
                elif fake._batch_api(self, "GET", b""):
                    pass
                else:
                    self._error(404, f"no route {self.path}", "invalid_request_error")

            def do_POST(self):
                self.number = None
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    if not fake._batch_api(self, "POST", raw):
                        self._error(404, f"no route {self.path}", "invalid_request_error")
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._error(400, "the body is not JSON", "invalid_request_error")
                    return
                client_request_id = self.headers.get("X-Client-Request-Id", "")
                number = self.number = fake._record(body, self.headers.get("Authorization", ""), client_request_id)
                self.client_request_id = fake.answering.client_request_id = client_request_id
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if fake.accepted_keys is not None and token not in fake.accepted_keys:
                    self._error(
                        401,
                        f"Incorrect API key provided: {token[:3]}***. You can find your API key in your account.",
                        "invalid_request_error",
                    )
                    return
                if fake.models is not None and body.get("model") not in fake.models:
                    self._error(
                        404, f"The model `{body.get('model')}` does not exist or you do not have access to it.", "invalid_request_error"
                    )
                    return
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
                    fake._release.wait(fake.hang_seconds)
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


def main() -> None:
    """`python -m tests.llm_server [--port 8001] [--latency 0.2]`: serves until Ctrl-C, for trying judges by hand
    (the demo's `loopback` endpoint is http://127.0.0.1:8001/v1)."""
    import argparse

    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible endpoint on 127.0.0.1 (any key, any model).")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args()
    server = FakeLLM(latency=args.latency)
    server._server = _Server(("127.0.0.1", args.port), server._handler_class())
    server.base_url = f"http://127.0.0.1:{args.port}/v1"
    print(f"Serving a fake OpenAI-compatible endpoint at {server.base_url} (Ctrl-C stops it)", flush=True)
    try:
        server._server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()


if __name__ == "__main__":
    main()
