"""Refuses request data a database cannot store, or declared in a character set other than UTF-8, before any view reads it.

Charsets. Browsers send forms as UTF-8 and say nothing about it; a request
whose Content-Type names another charset (`charset=latin-1`, `utf-16`, an
unknown name, or a codec that is no text encoding such as `base64`) is refused
with a 400 that says so (DeclaredCharsetMiddleware), rather than decoded as
something else or left to Django, which answers some of them with a bare 400
and others with a 500. UTF-8 under any of its names (`UTF8`, `utf_8`) and ASCII,
its subset, pass, read as UTF-8. A codec that is no text encoding fails inside
Django while the request object is built, before any middleware runs: the
request classes below (installed in config/wsgi.py and config/asgi.py) keep it
from failing there, so that the middleware can refuse it.

Unstorable text.

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

import codecs
import logging

from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.wsgi import WSGIRequest
from django.db import DataError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from common.storable import form_problem, printable, text_problem

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


# Charsets read as UTF-8: UTF-8 itself, under any of its names, and ASCII, which UTF-8 contains.
UTF8_COMPATIBLE = frozenset({"utf-8", "ascii"})


def charset_problem(charset: str) -> str | None:
    """Why a request declaring `charset` is refused, or None when it is read as UTF-8."""
    shown = printable(charset[:40])
    try:
        codec = codecs.lookup(charset)
    except (LookupError, ValueError):
        return f"The request declares the character set '{shown}', which is not one this site knows. Send it as UTF-8."
    if codec.name in UTF8_COMPATIBLE:
        return None
    return f"The request declares the character set '{shown}', but this site reads request data as UTF-8 only. Send it as UTF-8."


class _TolerantCharset:
    """Builds the request whatever charset its Content-Type names; `DeclaredCharsetMiddleware` then judges it.

    Django looks the charset up and, when Python knows it, decodes the query
    string with it at once: a codec that is no text encoding (`base64`,
    `rot13`) raises there, before any middleware, and the server answers 500.
    """

    def _set_content_type_params(self, meta):
        try:
            super()._set_content_type_params(meta)
        except LookupError:
            self._encoding = None


class TolerantWSGIRequest(_TolerantCharset, WSGIRequest):
    pass


class TolerantASGIRequest(_TolerantCharset, ASGIRequest):
    pass


class DeclaredCharsetMiddleware:
    """A 400 with a message for a request declaring a charset other than UTF-8 (see the module docstring).

    First among the middleware that read the request's data (sessions, CSRF, the checks below).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        charset = request.content_params.get("charset") if request.content_params else None
        if charset is not None:
            problem = charset_problem(charset)
            if problem:
                return refusal(request, problem)
            # Read as UTF-8 under its usual name: Django refuses form data declared under any other.
            request.encoding = "utf-8"
        return self.get_response(request)


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
            return refusal(
                request,
                "A value in the request cannot be stored (a number too large, a text too long or a character the database refuses).",
            )
        return None
