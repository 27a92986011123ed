"""The words every app uses for the two articles of a pair, and the conversions between them.

A pair stores its two articles as A and B. A rater sees one of them first: on the
left of the annotation page, or as "Article 1" in a judge's prompt. `a_first`
says whether that is A. A winner is then spoken of in three ways:

- by *side*, "a", "b" or TIE: how labels and verdicts are stored;
- by *position*, "1" (shown first), "2" (shown second) or TIE: what the rater saw;
- by *system*, a system key or TIE: what exports and the metrics use.

Everything here is pure: no Django, no database. Names (system keys and judge
names) follow one rule, `NAME_RULE`, checked by `name_problem` on every path by
which a name enters (importers, commands, forms, services, model fields).
"""

import re

TIE = "tie"
BOTH_BAD = "both_bad"
REFERENCE_SYSTEM = "wikipedia"

SIDE_A, SIDE_B = "a", "b"
SIDES = (SIDE_A, SIDE_B)
FIRST, SECOND = "1", "2"
POSITIONS = (FIRST, SECOND)

# A system key or a judge name, as real model names are spelled (`pythia-6.9b`,
# `cerebras-gpt-6.7B`, `gpt-3.5-turbo`). ASCII letters and digits, '-', '_' and '.'
# keep a name safe in a URL path segment, an HTML id, a file name and a CSV cell
# (no leading '-', '=', '+' or '@'); the first character and the rules on '.'
# mean a name is never '.', '..', hidden, or a path trick. No ':' either, which
# `calibration.selectors.HUMAN_PREFIX` relies on.
NAME_MAX_LENGTH = 100
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
NAME_RULE = (
    f"1 to {NAME_MAX_LENGTH} characters among ASCII letters, digits, '-', '_' and '.', "
    "starting with a letter or digit, with no '..' and not ending in '.'"
)


def name_problem(text: object, *, what: str = "name") -> str | None:
    """None when `text` is a valid system key or judge name, else the message naming the rule.

    `what` starts the message ("system", "judge name"): "system 'a b' must be 1 to 100 ...".
    """
    if isinstance(text, str) and NAME.fullmatch(text) and ".." not in text and not text.endswith("."):
        return None
    # Control characters, NULs and lone surrogates are spelled as escapes, so the message prints and stores.
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(text))
    return f"{what} '{shown}' must be {NAME_RULE}"


def position_of(side: str, a_first: bool) -> str:
    """The position ("1" or "2") at which `side` was shown; a tie stays a tie."""
    if side == TIE:
        return TIE
    return FIRST if (side == SIDE_A) == a_first else SECOND


def side_of(position: str, a_first: bool) -> str:
    """The side ("a" or "b") shown at `position`; a tie stays a tie."""
    if position == TIE:
        return TIE
    return SIDE_A if (position == FIRST) == a_first else SIDE_B


def system_of(side: str, system_a: str, system_b: str) -> str:
    """The system key of the side that won, or TIE."""
    if side == TIE:
        return TIE
    return system_a if side == SIDE_A else system_b


def side_for_system(system: str, system_a: str, system_b: str) -> str:
    """The side whose system is `system` (or TIE for a tie); ValueError if neither."""
    if system == TIE:
        return TIE
    if system == system_a:
        return SIDE_A
    if system == system_b:
        return SIDE_B
    raise ValueError(f"{system!r} is neither {system_a!r} nor {system_b!r}")


def swapped(position: str) -> str:
    """The other position ("1" <-> "2"); anything else is returned as it is."""
    return {FIRST: SECOND, SECOND: FIRST}.get(position, position)
