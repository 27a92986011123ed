"""Counting the words of a text (``count_words``). Pure Python, no Django.

A word is a whitespace-separated token (``str.split``) holding at least one
letter or digit (``[^\\W_]``). The import counts every article twice (as written
and as shown), so this is one of its hot paths: token by token in Python it cost
as much as rendering. Here most of the work is done by C on the UTF-8 bytes.

Each byte gets a shape (``_SHAPE``): ASCII white space ``" "``, an ASCII letter or
digit ``"a"``, other ASCII ``"p"``, any byte of a non-ASCII character ``"u"``.
Deleting the ``p`` and ``u`` bytes leaves runs of ``a`` between spaces, one per
token with an ASCII letter or digit, counted as the places where a run starts.
That is the whole count for ASCII text. Tokens of the bytes view with a
non-ASCII character are then counted exactly by the token-by-token rule (a
``u`` token can be a word, ``élan``, or not, ``—``; and a non-ASCII space,
U+00A0, splits what the bytes view took for one token), and the first count is
corrected by the difference. ASCII white space is white space to ``str.split``
too, so both views cut the text at the same places, and a token of the bytes
view is one or more tokens of ``str.split``.
"""

from __future__ import annotations

import re

__all__ = ["count_words"]

_ALNUM_RE = re.compile(r"[^\W_]")
_has_alnum = _ALNUM_RE.search


def _byte_shape(byte: int) -> int:
    if byte >= 0x80:
        return ord("u")
    char = chr(byte)
    if char.isspace():  # str.split's white space, \x1c-\x1f included
        return ord(" ")
    return ord("a") if char.isalnum() else ord("p")


_SHAPE = bytes(_byte_shape(b) for b in range(256))
_NOT_ASCII_ALNUM = bytes(b for b in range(256) if _SHAPE[b] in b"pu")


def _count_tokens(text: str) -> int:
    """The rule itself, token by token (for the few tokens with a non-ASCII character)."""
    return sum(1 for token in text.split() if token.isalnum() or _has_alnum(token))


def count_words(text: str) -> int:
    """Words of prose: whitespace-separated tokens holding at least one letter or
    digit. Markdown syntax and punctuation (``# * | - > ` _`` …) never make a word
    on their own, so ``**bold**``, ``well-known`` and ``3.5%`` count once while
    ``|``, ``---``, ``>``, ``-`` and ``—`` count zero."""
    data = text.encode("utf-8", "surrogatepass")
    runs = data.translate(_SHAPE, _NOT_ASCII_ALNUM)
    words = runs.count(b" a") + runs.startswith(b"a")
    if text.isascii():
        return words
    shape = data.translate(_SHAPE)
    find = shape.find
    at = find(b"u")
    while at >= 0:
        start = shape.rfind(b" ", 0, at) + 1
        end = find(b" ", at)
        if end < 0:
            end = len(shape)
        counted = find(b"a", start, end) >= 0  # what the first count gave this token
        parts = data[start:end].decode("utf-8", "surrogatepass").split()
        if len(parts) == 1:
            if not counted and _has_alnum(parts[0]):
                words += 1
        else:
            words += _count_tokens(" ".join(parts)) - counted
        at = find(b"u", end)
    return words
