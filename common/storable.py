"""Text a database can store. No Django imports here.

Python strings happily hold a NUL (U+0000) or a lone surrogate (U+D800..U+DFFF);
PostgreSQL refuses the first in any text column and no UTF-8 database can hold
the second. Every path by which text enters (forms, the JSON API, the importers)
asks these functions first, so that bad input is a message, never a crash.

Bytes are checked by decoding them with `surrogateescape`: each byte that is
not UTF-8 then becomes one surrogate in U+DC80..U+DCFF, so a single search finds
NULs, lone surrogates and undecodable bytes at once, and `describe(...,
decoded=True)` names the last kind correctly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote_to_bytes

# Deep enough for any body this project accepts; the API's bodies are flat objects.
MAX_JSON_DEPTH = 64

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def describe(char: str, *, decoded: bool = False) -> str:
    """Names one unstorable character; `decoded` means the text came from bytes decoded with `surrogateescape`."""
    code = ord(char)
    if code == 0:
        return "a NUL character (U+0000), which cannot be stored"
    if decoded and 0xDC80 <= code <= 0xDCFF:
        return f"bytes that are not valid UTF-8 (0x{code - 0xDC00:02X})"
    return f"a lone surrogate (U+{code:04X}), which is not valid Unicode text"


def _no_surrogate(text: str) -> bool:
    """True when ``text`` holds no code point of U+D800..U+DFFF: strict UTF-8
    encoding fails on exactly those (and ASCII text has none)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def first_unstorable(text: str) -> int | None:
    """Index of the first character a database cannot store, or None."""
    if "\x00" not in text and _no_surrogate(text):
        return None  # the common case, at C speed: a search for NUL and an encode
    match = _UNSTORABLE.search(text)
    return match.start() if match else None


def text_problem(text: str, *, decoded: bool = False) -> str | None:
    """ "contains ..." for text holding an unstorable character, else None."""
    index = first_unstorable(text)
    if index is None:
        return None
    return "contains " + describe(text[index], decoded=decoded)


def located_problem(text: str, *, decoded: bool = False) -> tuple[int, int, str] | None:
    """(line, column, "contains ...") of the first unstorable character, both counted from 1; None if clean."""
    index = first_unstorable(text)
    if index is None:
        return None
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column, "contains " + describe(text[index], decoded=decoded)


def bytes_problem(data: bytes) -> str | None:
    """ "contains ..." for bytes that are not storable UTF-8 text (NUL, invalid or surrogate sequences), else None."""
    if data.isascii():
        return text_problem(data.decode("ascii"))
    return text_problem(data.decode("utf-8", "surrogateescape"), decoded=True)


def form_problem(body: bytes) -> tuple[str, str] | None:
    """(field name, "contains ...") for the first url-encoded field that is not storable text, else None."""
    # Fast path: most saves are plain ASCII with no escape that could hide a NUL or a non-UTF-8 byte.
    if body.isascii() and b"%" not in body and b"\x00" not in body:
        return None
    for pair in body.split(b"&"):
        name, _, value = pair.partition(b"=")
        name_bytes = unquote_to_bytes(name.replace(b"+", b" "))
        for part in (name_bytes, unquote_to_bytes(value.replace(b"+", b" "))):
            problem = bytes_problem(part)
            if problem:
                return printable(name_bytes.decode("utf-8", "replace")), problem
    return None


def printable(text: str) -> str:
    """The text with NULs and surrogates spelled as escapes, safe to print or show in a message."""
    if first_unstorable(text) is None:
        return text
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def _walk(data: object) -> Iterator[tuple[str, object, int]]:
    """(path, value, depth) for every container, key and value, without recursion (deep input must not exhaust the stack)."""
    stack: list[tuple[str, object, int]] = [("", data, 1)]
    while stack:
        path, value, depth = stack.pop()
        yield path, value, depth
        if isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                where = f"{path}.{key}" if path else str(key)
                yield where, key, depth
                stack.append((where, item, depth + 1))
        elif isinstance(value, list):
            for index in range(len(value) - 1, -1, -1):
                stack.append((f"{path}[{index}]", value[index], depth + 1))


def json_problem(data: object, *, max_depth: int | None = MAX_JSON_DEPTH) -> str | None:
    """What makes parsed JSON unstorable: a string (key or value) with NUL or a lone surrogate, or nesting over `max_depth`."""
    for path, value, depth in _walk(data):
        if isinstance(value, (dict, list)):
            if max_depth is not None and depth > max_depth:
                return f"nests deeper than {max_depth} levels"
        elif isinstance(value, str):
            problem = text_problem(value)
            if problem:
                return f"{printable(path) if path else 'the value'} {problem}"
    return None
