"""The Batch API of the fake server of tests/llm_server.py (``/v1/files`` and ``/v1/batches``, described
in that module's docstring), as a mixin of ``FakeLLM``: its state (``_files``, ``_batches``,
``_batch_state``, ``batch_polls``…) is set up by ``FakeLLM.__init__`` and ``reset``, and a batch's lines
are answered with ``FakeLLM``'s own ``_completion``, ``_bill`` and script of faults."""

from __future__ import annotations

import json
import time
from email import policy as email_policy
from email.parser import BytesParser
from urllib.parse import parse_qs, urlsplit


class BatchAPI:
    def release_batch_create(self) -> None:
        """Lets a reply held by ``hang_batch_create`` go out."""
        self._batch_created.set()

    def _next_number(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _file_made(self, content: bytes, filename: str, purpose: str) -> dict:
        number = self._next_number()
        made = {
            "id": f"file-fake-{number}",
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        with self._batch_lock:
            self._files[made["id"]] = {"object": made, "content": content}
        return made

    def _batch_api(self, handler, method: str, raw: bytes) -> bool:
        """Serves /v1/files and /v1/batches; False when the path is neither."""
        url = urlsplit(handler.path)
        parts = url.path.rstrip("/").split("/")
        if parts[:2] != ["", "v1"] or len(parts) < 3 or parts[2] not in ("files", "batches"):
            return False
        kind, rest = parts[2], parts[3:]
        if method == "POST" and kind == "files" and not rest:
            self._upload(handler, raw)
        elif method == "GET" and kind == "files" and len(rest) in (1, 2) and rest[1:] in ([], ["content"]):
            with self._batch_lock:
                stored = self._files.get(rest[0])
            if stored is None:
                handler._error(404, f"no file {rest[0]}", "invalid_request_error")
            elif rest[1:]:
                handler._send_bytes(200, stored["content"], "application/octet-stream")
            else:
                handler._send(200, stored["object"])
        elif method == "POST" and kind == "batches" and not rest:
            self._batch_create(handler, raw)
        elif method == "GET" and kind == "batches" and not rest:
            query = parse_qs(url.query)
            with self._batch_lock:
                newest_first = [dict(b) for b in reversed(self._batches.values())]
            after = (query.get("after") or [""])[0]
            if after:
                ids = [b["id"] for b in newest_first]
                newest_first = newest_first[ids.index(after) + 1 :] if after in ids else []
            limit = int((query.get("limit") or ["20"])[0])
            page = newest_first[:limit]
            handler._send(
                200,
                {
                    "object": "list",
                    "data": page,
                    "first_id": page[0]["id"] if page else None,
                    "last_id": page[-1]["id"] if page else None,
                    "has_more": len(newest_first) > limit,
                },
            )
        elif method == "GET" and kind == "batches" and len(rest) == 1:
            found = self._batch_advance(rest[0])
            if found is None:
                handler._error(404, f"no batch {rest[0]}", "invalid_request_error")
            else:
                handler._send(200, found)
        elif method == "POST" and kind == "batches" and rest[1:] == ["cancel"]:
            with self._batch_lock:
                batch = self._batches.get(rest[0])
                if batch is not None and batch["status"] in ("validating", "in_progress"):
                    batch["status"], batch["cancelling_at"] = "cancelling", int(time.time())
                found = None if batch is None else dict(batch)
            if found is None:
                handler._error(404, f"no batch {rest[0]}", "invalid_request_error")
            else:
                handler._send(200, found)
        else:
            return False
        return True

    def _upload(self, handler, raw: bytes) -> None:
        content_type = handler.headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            handler._error(400, "a file upload is multipart/form-data", "invalid_request_error")
            return
        message = BytesParser(policy=email_policy.HTTP).parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw)
        fields, upload = {}, None
        for part in message.iter_parts():
            if part.get_filename():
                upload = (part.get_filename(), part.get_payload(decode=True) or b"")
            else:
                fields[part.get_param("name", header="content-disposition")] = (part.get_payload(decode=True) or b"").decode("utf-8")
        if upload is None or fields.get("purpose") != "batch":
            handler._error(400, "expected a file and purpose=batch", "invalid_request_error")
            return
        handler._send(200, self._file_made(upload[1], upload[0], "batch"))

    def _batch_create(self, handler, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            handler._error(400, "the body is not JSON", "invalid_request_error")
            return
        with self._batch_lock:
            source = self._files.get(body.get("input_file_id") or "")
        if source is None or source["object"]["purpose"] != "batch":
            handler._error(400, f"no batch input file {body.get('input_file_id')!r}", "invalid_request_error")
            return
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            handler._error(400, "only /v1/chat/completions within 24h", "invalid_request_error")
            return
        number = self._next_number()
        now = int(time.time())
        batch = {
            "id": f"batch_fake_{number}",
            "object": "batch",
            "endpoint": body["endpoint"],
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "in_progress_at": None,
            "expires_at": now + 86_400,
            "completed_at": None,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        custom_ids = []
        for line in source["content"].splitlines():
            if line.strip():
                try:
                    custom_ids.append(json.loads(line).get("custom_id"))
                except (ValueError, AttributeError):
                    custom_ids.append(None)
        batch["request_counts"]["total"] = len(custom_ids)
        with self._batch_lock:
            self._batches[batch["id"]] = batch
            self._batch_state[batch["id"]] = {"polls": 0, "made": time.monotonic()}
            made = dict(batch)
        with self._lock:
            self.batch_submissions.append({"id": batch["id"], "metadata": body.get("metadata"), "custom_ids": custom_ids})
        if self.hang_batch_create:
            self._batch_created.wait(self.hang_seconds)
        handler._send(200, made)

    def _batch_advance(self, batch_id: str) -> dict | None:
        """A retrieve: the batch moves on (see the module docstring) and is returned as it now is."""
        with self._batch_lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return None
            state = self._batch_state[batch_id]
            state["polls"] += 1
            now = int(time.time())
            if batch["status"] == "cancelling":
                batch["status"], batch["cancelled_at"] = "cancelled", now
            elif batch["status"] in ("validating", "in_progress"):
                due = state["polls"] > self.batch_polls and time.monotonic() - state["made"] >= self.batch_delay
                if due and not self.hold_batches:
                    self._batch_answer(batch)
                elif batch["status"] == "validating":
                    batch["status"], batch["in_progress_at"] = "in_progress", now
            return dict(batch)

    def _batch_answer(self, batch: dict) -> None:
        """Answers the batch's lines as synchronous requests would be answered (holding _batch_lock)."""
        outputs, errors = [], []
        lines = [line for line in self._files[batch["input_file_id"]]["content"].splitlines() if line.strip()]
        for index, line in enumerate(lines):
            request = json.loads(line)
            custom_id, body = request.get("custom_id"), request.get("body") or {}
            number = self._next_number()
            if self.expire_batches is not None and index >= self.expire_batches:
                message = "This request could not be executed before the completion window expired."
                error = {"code": "batch_expired", "message": message}
                errors.append({"id": f"batch_req_fake_{number}", "custom_id": custom_id, "response": None, "error": error})
                continue
            with self._lock:
                self.batch_requests.append(body)
            fault = self._next_fault()
            failure = None
            if self.refuse_schema and "response_format" in body:
                failure = (400, "response_format of type json_schema is not supported by this model", "invalid_request_error")
            elif fault == "500":
                failure = (500, "the fake server failed on purpose", "server_error")
            elif fault == "400":
                failure = (400, "the prompt is longer than this model's context window", "invalid_request_error")
            elif isinstance(fault, tuple):
                failure = (429, "rate limited on purpose", "rate_limit_error")
            elif fault == "timeout":
                failure = (408, "the request timed out", "timeout")
            if failure is not None:
                status, message, kind = failure
                refusal = {"error": {"message": message, "type": kind, "code": None, "param": None}}
                response = {"status_code": status, "request_id": f"req-fake-{number}", "body": refusal}
                errors.append({"id": f"batch_req_fake_{number}", "custom_id": custom_id, "response": response, "error": None})
                continue
            completion = self._completion(body, number, fault)
            self._bill(completion, number, custom_id or "", batch=True)
            response = {"status_code": 200, "request_id": f"req-fake-{number}", "body": completion}
            outputs.append({"id": f"batch_req_fake_{number}", "custom_id": custom_id, "response": response, "error": None})
        now = int(time.time())
        expired = self.expire_batches is not None and self.expire_batches < len(lines)
        batch["status"] = "expired" if expired else "completed"
        batch["expired_at" if expired else "completed_at"] = now
        batch["in_progress_at"] = batch["in_progress_at"] or now
        answered = sum(1 for line in errors if line["response"] is not None)
        batch["request_counts"] = {"total": len(lines), "completed": len(outputs), "failed": answered}
        for kind, rows in (("output_file_id", outputs), ("error_file_id", errors)):
            if rows:
                content = "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
                number = self._next_number()
                made = {
                    "id": f"file-fake-{number}",
                    "object": "file",
                    "bytes": len(content),
                    "created_at": now,
                    "filename": f"{batch['id']}_{kind[:-8]}.jsonl",
                    "purpose": "batch_output",
                    "status": "processed",
                }
                self._files[made["id"]] = {"object": made, "content": content}
                batch[kind] = made["id"]
