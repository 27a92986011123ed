"""The words for the two articles of a pairwise item, and the conversions between them.

A pair stores its two articles as A and B. A rater sees one of them first: on the
left of the annotation page, or as "Article 1" in a judge's prompt. `a_first`
says whether that is A. A winner is then spoken of in three ways:

- by *side*, "a", "b" or TIE: how labels, verdicts and the overall answer are stored;
- by *position*, "1" (shown first), "2" (shown second) or TIE: what the rater saw;
- by *system*, a system key or TIE: what exports and the metrics use.

Pure: no Django, no database.
"""

TIE = "tie"
BOTH_BAD = "both_bad"

SIDE_A, SIDE_B = "a", "b"
SIDES = (SIDE_A, SIDE_B)
FIRST, SECOND = "1", "2"
POSITIONS = (FIRST, SECOND)


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


SET_ORDER = (SIDE_A, SIDE_B, TIE)


def acceptable_set(winner: str, also) -> tuple[str, ...]:
    """Every verdict (by side, or TIE) a rater accepts: `winner` and those marked also acceptable, in
    the order a, b, tie; empty when there is no winner."""
    if not winner:
        return ()
    chosen = {winner, *also}
    return tuple(side for side in SET_ORDER if side in chosen)
