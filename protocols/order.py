"""The order an item's articles are shown in: a permutation of its slots.

An item holds its articles in slots 0, 1, ... (`annotate.ItemArticle`); a slot is named by a letter,
slot 0 "a", slot 1 "b" and so on, the letters labels already use for the sides of a pair. The order a
viewer (an annotator's assignment, an adjudication, a judge's call) is shown is the string of those
letters in display order: "ab" shows slot a first, "ba" slot b first, "a" is a one-article item,
"cab" three articles with slot c first. The draw is the one place the order comes from; everything
shown by position is turned back into slots through it, so stored answers never depend on it.

A pair's order is also kept, for now, as `a_first` (True for "ab"): `of_a_first` and `a_first` turn
one into the other, and the database checks that the two agree.

Pure: no Django.
"""

from __future__ import annotations

import secrets

SLOTS = "abcdef"  # the most articles an item may hold is len(SLOTS)
MAX_ARTICLES = len(SLOTS)


def natural(k: int) -> str:
    """The order of `k` slots as stored: "a", "ab", "abc", ..."""
    if not 1 <= k <= MAX_ARTICLES:
        raise ValueError(f"an item holds 1 to {MAX_ARTICLES} articles, not {k}")
    return SLOTS[:k]


def drawn(k: int) -> str:
    """A uniformly random order of `k` slots, from the system's secure generator (a viewer cannot
    predict it from earlier draws)."""
    letters = list(natural(k))
    for i in range(len(letters) - 1, 0, -1):  # Fisher-Yates, from the top
        j = secrets.randbelow(i + 1)
        letters[i], letters[j] = letters[j], letters[i]
    return "".join(letters)


def of_a_first(a_first: bool) -> str:
    """A pair's order from its `a_first` flag."""
    return "ab" if a_first else "ba"


def a_first(order: str) -> bool:
    """Whether slot a is shown first (True for every one-article order)."""
    return order[:1] == "a"


def slot_at(order: str, position: int) -> str:
    """The slot shown at `position` (1 for the first article shown) under `order`."""
    if not 1 <= position <= len(order):
        raise ValueError(f"position {position} is not one of 1 to {len(order)}")
    return order[position - 1]


def position_of(order: str, slot: str) -> int:
    """Where slot `slot` is shown under `order` (1 for first)."""
    at = order.find(slot)
    if at < 0 or len(slot) != 1:
        raise ValueError(f"slot {slot!r} is not one of {', '.join(order)}")
    return at + 1


def problem(order: object, k: int) -> str | None:
    """None when `order` is a permutation of `k` slots, else what is wrong with it."""
    if not isinstance(order, str) or sorted(order) != list(natural(k)):
        return f"order {order!r} is not a permutation of the slots {', '.join(natural(k))}"
    return None
