"""Offline judges: deterministic verdicts without a model.

Pure Python, no Django. They give a run something to compare against from day
one and set the floors a real judge has to beat in calibration:

``length_verdict``
    The longer article wins (word count); exactly equal counts tie.
``words_to_watch_verdict``
    For the eleven "words to watch" criteria (``ww_wtw_1`` … ``ww_wtw_11``), the
    article with fewer matches of that criterion's word list per 1,000 words wins;
    other criteria, and equal rates, fall back to ``length_verdict``.
``random_verdict``
    A seeded coin: the same seed and parts always give the same verdict.

The word lists are short and deliberately plain: each entry is a phrase matched
case-insensitively on word boundaries, where a space stands for any run of
whitespace and a hyphen also matches a space (``world-class`` finds
``world class``). Their purpose is a cheap signal, not an exhaustive style guide.
"""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction

from annotate.cleaning import count_words as _count_words
from protocols.pairwise import FIRST, SECOND, TIE

__all__ = [
    "count_words",
    "length_verdict",
    "WATCH_PHRASES",
    "WATCH_CLASSES",
    "WATCH_CLASS_BY_KEY",
    "watch_count",
    "words_to_watch_verdict",
    "random_verdict",
]


# Each entry is a small regular expression: a space means "one or more
# whitespace characters", a hyphen means "a hyphen or a space".
WATCH_PHRASES: dict[str, tuple[str, ...]] = {
    "puffery": (
        "legendary",
        "iconic",
        "world-class",
        "world-renowned",
        "world-famous",
        "world-leading",
        "renowned",
        "acclaimed",
        "prestigious",
        "illustrious",
        "storied",
        "fabled",
        "breathtaking",
        "stunning",
        "spectacular",
        "magnificent",
        "awe-inspiring",
        "majestic",
        "groundbreaking",
        "revolutionary",
        "visionary",
        "trailblazing",
        "cutting-edge",
        "state-of-the-art",
        "unparalleled",
        "unrivalled",
        "unrivaled",
        "unmatched",
        "unsurpassed",
        "second to none",
        "extraordinary",
        "outstanding",
        "exceptional",
        "superb",
        "brilliant",
        "masterpiece",
        "masterful",
        "must-see",
        "timeless",
        "beloved",
        "top-notch",
    ),
    "contentious_label": (
        "extremists?",
        "extremism",
        "fanatics?",
        "fanatical",
        "zealots?",
        "bigots?",
        "bigoted",
        "racists?",
        "sexists?",
        "homophobic",
        "xenophobic",
        "fundamentalists?",
        "cults?",
        "sects?",
        "heretics?",
        "heretical",
        "terrorists?",
        "deniers?",
        "denialists?",
        "conspiracy theorists?",
        "pseudoscience",
        "pseudoscientific",
        "quacks?",
        "quackery",
        "propagandists?",
        "demagogues?",
        "hate groups?",
        "far-right",
        "far-left",
        "ultra-nationalists?",
        "controversial",
        "notorious",
        "infamous",
        "militants?",
    ),
    "unsupported_attribution": (
        "some (?:people|observers|critics|scholars|historians|experts|commentators) "
        "(?:say|said|argue|argued|believe|believed|claim|claimed|feel|felt|think|thought)",
        "some (?:say|argue|believe|claim|feel|think)",
        "many (?:people |experts |critics |scholars |observers )?(?:say|argue|believe|feel|think|agree|consider)",
        "(?:experts|critics|observers|scholars|historians) (?:say|agree|argue|believe|note|claim)",
        "it (?:is|was|has been|had been) (?:widely |often |generally |commonly |sometimes )?"
        "(?:said|believed|thought|held|claimed|suggested|argued|considered|regarded|accepted|reported)",
        "(?:is|are|was|were) (?:widely|often|generally|commonly) (?:regarded|considered|seen|viewed|thought) as",
        "(?:is|are|was|were) considered by many",
        "(?:studies|research|surveys) (?:have|has) shown",
        "research suggests",
        "according to (?:some|many|critics|experts)",
        "most people",
        "it is (?:widely )?known that",
    ),
    "expression_of_doubt": (
        "so-called",
        "alleged",
        "allegedly",
        "purported",
        "purportedly",
        "supposedly",
        "ostensibly",
        "ostensible",
        "self-styled",
        "self-proclaimed",
        "would-be",
        "reputedly",
    ),
    "editorializing": (
        "interestingly",
        "clearly",
        "obviously",
        "of course",
        "sadly",
        "unfortunately",
        "fortunately",
        "tragically",
        "remarkably",
        "undeniably",
        "undoubtedly",
        "unquestionably",
        "without a doubt",
        "needless to say",
        "it goes without saying",
        "it is worth noting",
        "it should be noted",
        "it must be noted",
        "notably",
        "importantly",
        "ironically",
        "amazingly",
        "surprisingly",
        "astonishingly",
        "inevitably",
        "indeed",
        "truly",
        "arguably",
        "of note",
    ),
    "said_synonym": (
        "admits?",
        "admitted",
        "admitting",
        "reveals",
        "revealed",
        "insists?",
        "insisted",
        "concedes?",
        "conceded",
        "claims?",
        "claimed",
        "confess(?:es|ed)?",
        "pointed out",
        "points out",
        "asserts?",
        "asserted",
        "boasts?",
        "boasted",
        "retorted",
    ),
    "euphemism": (
        "pass(?:ed|es)? away",
        "(?:his|her|their) passing",
        "taken from us",
        "lost (?:his|her|their) (?:life|lives|battle|fight)",
        "departed this life",
        "laid to rest",
        "eternal rest",
        "gave (?:his|her|their) lives?",
        "made the ultimate sacrifice",
        "in a better place",
        "no longer with us",
        "collateral damage",
        "enhanced interrogation",
        "(?:was|were) let go",
        "downsizing",
        "rightsizing",
        "between jobs",
        "senior citizens?",
        "differently abled",
        "pre-owned",
        "correctional facility",
        "neutrali[sz]ed",
    ),
    "cliche_idiom": (
        "double-edged sword",
        "at the end of the day",
        "jewel in (?:the|its|his|her|their) crown",
        "(?:stood|stands|stand|withstood) the test of time",
        "tip of the iceberg",
        "perfect storm",
        "in the nick of time",
        "the rest is history",
        "against all odds",
        "last but not least",
        "when all is said and done",
        "game-changer",
        "game changing",
        "paradigm shift",
        "low-hanging fruit",
        "whole new level",
        "outside the box",
        "push(?:ed|es)? the envelope",
        "elephant in the room",
        "blessing in disguise",
        "rich tapestry",
        "force to be reckoned with",
        "took the world by storm",
        "household name",
        "needle in a haystack",
        "blink of an eye",
        "light at the end of the tunnel",
        "only time will tell",
        "writing (?:was|is) on the wall",
        "stone's throw",
        "lion's share",
        "in a nutshell",
        "the sky's the limit",
        "hit the ground running",
        "by leaps and bounds",
        "larger than life",
        "pivotal role",
        "left an indelible mark",
        "leaves? a lasting legacy",
    ),
    "relative_time": (
        "recently",
        "recent years",
        "recent times",
        "recent decades",
        "currently",
        "nowadays",
        "presently",
        "at present",
        "at the moment",
        "these days",
        "to this day",
        "to date",
        "soon(?! after| afterwards| thereafter)",
        "as of (?:now|today|yet|this writing)",
        "right now",
        "in the near future",
        "in the coming (?:years|months|decades)",
        "upcoming",
        "latest",
        "this (?:year|month|week|decade)",
        "last (?:year|month|week)",
        "(?:was|were) once",
        "(?:has|have|is|are) yet to",
        "today",
    ),
    "unspecified_place_or_event": (
        "here",
        "in this (?:region|area|place|country|city)",
        "in the area",
        "locally",
        "at times",
        "from time to time",
        "frequently",
        "occasionally",
        "somehow",
        "somewhere",
        "at some point",
        "some time ago",
        "elsewhere",
        "in some places",
        "in certain (?:areas|places|regions)",
        "in various places",
        "on (?:several|various|one|some) occasions?",
        "in some cases",
    ),
    "survived_by": (
        "(?:is|was|were) survived by",
        "survived by",
        "predeceased by",
        "leaves behind",
        "left behind (?:his|her|their|a) (?:wife|husband|widow|widower|children|family|son|daughter)",
        "(?:is|was) mourned by",
        "leaves (?:his|her|a) (?:wife|husband|widow|widower)",
    ),
}


def _compile(phrases: tuple[str, ...]) -> re.Pattern:
    parts = []
    for phrase in phrases:
        part = phrase.replace("'", "['\u2019]").replace(" ", r"\s+").replace("-", r"[-\u2010\u2011\s]")
        parts.append(f"(?:{part})")
    return re.compile(r"\b(?:" + "|".join(parts) + r")\b", re.IGNORECASE)


WATCH_CLASSES: dict[str, re.Pattern] = {name: _compile(phrases) for name, phrases in WATCH_PHRASES.items()}

# Mirrors the "watch_class" of each ww_wtw_* criterion in
# fixtures/criteria/wiki_writing.json (a test keeps them in step).
WATCH_CLASS_BY_KEY: dict[str, str] = {
    "ww_wtw_1": "puffery",
    "ww_wtw_2": "contentious_label",
    "ww_wtw_3": "unsupported_attribution",
    "ww_wtw_4": "expression_of_doubt",
    "ww_wtw_5": "editorializing",
    "ww_wtw_6": "said_synonym",
    "ww_wtw_7": "euphemism",
    "ww_wtw_8": "cliche_idiom",
    "ww_wtw_9": "relative_time",
    "ww_wtw_10": "unspecified_place_or_event",
    "ww_wtw_11": "survived_by",
}


def count_words(text: str) -> int:
    """The same count annotators' statistics use (``annotate.cleaning``):
    whitespace-separated tokens holding a letter or digit."""
    return _count_words(text)


def length_verdict(text_1: str, text_2: str) -> str:
    words_1, words_2 = count_words(text_1), count_words(text_2)
    if words_1 == words_2:
        return TIE
    return FIRST if words_1 > words_2 else SECOND


def _pattern(watch_class: str) -> re.Pattern:
    try:
        return WATCH_CLASSES[watch_class]
    except KeyError:
        raise ValueError(f"unknown watch class {watch_class!r}; known: {', '.join(WATCH_CLASSES)}") from None


def watch_count(text: str, watch_class: str) -> int:
    return sum(1 for _ in _pattern(watch_class).finditer(text))


def _exact_rate(text: str, watch_class: str) -> Fraction:
    # Exact, so that equal rates compare equal and fall through to length.
    words = count_words(text)
    return Fraction(watch_count(text, watch_class), words) if words else Fraction(0)


def words_to_watch_verdict(text_1: str, text_2: str, *, criterion_key: str, watch_class: str = "") -> str:
    watch_class = watch_class or WATCH_CLASS_BY_KEY.get(criterion_key, "")
    if not watch_class:
        return length_verdict(text_1, text_2)
    rate_1, rate_2 = _exact_rate(text_1, watch_class), _exact_rate(text_2, watch_class)
    if rate_1 == rate_2:
        return length_verdict(text_1, text_2)
    return FIRST if rate_1 < rate_2 else SECOND


def random_verdict(*, seed: int, parts: tuple, allow_tie: bool) -> str:
    """A coin from sha256 of (seed, parts): "1"/"2" with equal odds, or
    "1"/"2"/"tie" a third each when ties are allowed."""
    material = json.dumps([seed, list(parts)], default=str, ensure_ascii=False, separators=(",", ":"))
    number = int.from_bytes(hashlib.sha256(material.encode("utf-8")).digest()[:8], "big")
    return (FIRST, SECOND, TIE)[number % 3] if allow_tie else (FIRST, SECOND)[number % 2]


LENGTH, WORDS_TO_WATCH, RANDOM = "length", "words-to-watch", "random"


def baseline_verdicts(
    kind: str, text_1: str, text_2: str, criteria: list[tuple[str, str]], *, seed: int, parts: tuple, allow_tie: bool
) -> dict[str, tuple[str, str]]:
    """A baseline's (position, reason) for each (criterion key, watch class), on the articles shown
    first and second. `parts` (the pair and its order) and the criterion key seed the coin; when ties
    are not allowed, an undecided baseline falls back on that coin."""
    pair_id, a_first = parts
    verdicts = {}
    for key, watch_class in criteria:
        coin = (pair_id, key, a_first)
        if kind == LENGTH:
            position, reason = length_verdict(text_1, text_2), "The longer article."
        elif kind == WORDS_TO_WATCH:
            position = words_to_watch_verdict(text_1, text_2, criterion_key=key, watch_class=watch_class)
            reason = "Fewer words to watch."
        else:
            position, reason = random_verdict(seed=seed, parts=coin, allow_tie=allow_tie), "A seeded coin."
        if position == TIE and not allow_tie:
            position = random_verdict(seed=seed, parts=coin, allow_tie=False)
            reason += " Undecided; a seeded coin chose."
        verdicts[key] = (position, reason)
    return verdicts
