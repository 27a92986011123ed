"""Refuses request data a database cannot store, before any view reads it.

PostgreSQL stores no NUL (U+0000) in text, and no database stores a lone
surrogate; Django hands both to views (a surrogate only through undecodable
bytes, which it quietly replaces). Left alone they fail deep inside a save as a
500, and the page script retries a 500 forever. Here they become a 400 with a
message: JSON for /api/, plain text for htmx (the page script shows it), a small
page for forms posted without JavaScript.

JSON bodies are the parser's job (annotate.parsers.SafeJSONParser) and uploaded
files the importers'; this reads only the path, the query string and form fields.
The checks search what Django parses anyway (about 50 µs for a 5,000-character
rationale), so a save stays fast.
"""

from __future__ import annotations

import logging

from django.db import DataError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from annotate.storable import form_problem, printable, text_problem

logger = logging.getLogger(__name__)

URLENCODED, MULTIPART = "application/x-www-form-urlencoded", "multipart/form-data"


def _raw(text: str) -> bytes:
    # WSGI passes the raw bytes of the path and query string as Latin-1 text.
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def request_problem(request: HttpRequest) -> str | None:
    """A sentence naming the first unstorable part of the request, or None."""
    problem = text_problem(request.path_info)
    if problem:
        return f"The address {problem}."
    query = request.META.get("QUERY_STRING", "")
    if query:
        found = form_problem(_raw(query))
        if found:
            return f"The query parameter '{found[0]}' {found[1]}."
    content_type = request.content_type or ""
    if content_type not in (URLENCODED, MULTIPART):
        return None
    if request.method != "POST":
        # A PUT or PATCH to the API, which DRF's FormParser reads from the same cached bytes.
        found = form_problem(request.body) if content_type == URLENCODED else None
        return f"The field '{found[0]}' {found[1]}. Remove that character and save again." if found else None
    # Django parses the fields once for everybody (CSRF, the view); scanning the decoded values
    # is a C-speed search. Undecodable bytes were replaced by U+FFFD, so only a value holding
    # one sends us back to the raw bytes, which multipart fields do not keep: there the
    # replacement character is stored, harmlessly.
    for name, values in request.POST.lists():
        for value in (name, *values):
            problem = text_problem(value)
            if problem:
                return f"The field '{printable(name)}' {problem}. Remove that character and save again."
            if "\ufffd" in value and content_type == URLENCODED:
                found = form_problem(request.body)
                if found:
                    return f"The field '{found[0]}' {found[1]}. Remove that character and save again."
    return None


def refusal(request: HttpRequest, message: str) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": message}, status=400)
    if request.headers.get("HX-Request") == "true":
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    return HttpResponse(render_to_string("refused.html", {"message": message}, request), status=400)


class UnstorableInputMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = request_problem(request)
        if problem:
            return refusal(request, problem)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # The last line of defence for numbers a form or serializer forgot to bound:
        # PostgreSQL answers DataError ("integer out of range"), SQLite OverflowError.
        if isinstance(exception, (DataError, OverflowError)):
            logger.warning("Refused a request whose values the database cannot hold: %s", exception, exc_info=exception)
            return refusal(request, "A value in the request cannot be stored (a number too large, a text too long or a character the database refuses).")
        return None
