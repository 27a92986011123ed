"""Blocks under a heading that announces sources, and the agent's notes at an article's ends.

Pure Python, no Django. Every block under such a heading (a paragraph line, a list
item with its indented continuation, a table, a block quote) is one of three
classes, decided by a small scored classifier whose features and thresholds are
below:

``ENTRY``
    a citation entry: a URL or domain, an identifier (ISBN, DOI, pages), an access
    note (Retrieved, Accessed, Available, archived), a format or language tag
    ((PDF), (Swedish)), an outlet or publisher, a date, a quoted or italic title,
    an author list, a leading entry number, a short ``Name Year`` citation, a
    string of short dotted segments ("Surname, A. Title. City, 1990.").
``NOTE``
    an agent's note: text about the task rather than the subject (creating or
    saving the article, the rubric or guidelines, the sources provided, what the
    user asked, talk addressed to the user), or a sentence about this text's own
    sources ("the sources listed below").
``CONTENT``
    everything else: a table of data (unless its header names sources or links),
    prose about the subject, a discography or a timeline.

Each feature adds its weight when it fires (once per block); a block is an entry
at ``ENTRY_THRESHOLD`` and a note at ``NOTE_THRESHOLD``. A block that reads as
prose (``PROSE_MIN_WORDS`` words outside quotes and titles, a share of function
words of at least ``PROSE_FUNCTION_SHARE`` and a finite verb) loses ``PROSE_DISCOUNT``
from its entry score: an explanatory footnote may quote a title and give a year.
A list that follows a note ending with ":" belongs to that note (the agent's
"It follows the guidelines:" and its bullets).

The classifier never sees the sample's strings: the features are shapes
(punctuation, dates, identifiers) and small closed word lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from annotate.markdown_lines import ALIGN_ROW_RE, CELL_SPLIT_RE

__all__ = [
    "CONTENT",
    "ENTRY",
    "ENTRY_THRESHOLD",
    "NOTE",
    "NOTE_THRESHOLD",
    "Block",
    "Decision",
    "classify_block",
    "note_score",
]

ENTRY = "citation entry"
NOTE = "agent's note"
CONTENT = "content"

ENTRY_THRESHOLD = 2.5
NOTE_THRESHOLD = 3.0
PROSE_MIN_WORDS = 12
PROSE_FUNCTION_SHARE = 0.25
PROSE_DISCOUNT = 1.5
CONTEXT_ENTRY_SHARE = 2 / 3
CONTEXT_ENTRY_MIN = 1.5


@dataclass(frozen=True)
class Block:
    start: int  # first line (index into the lines it was cut from)
    end: int  # one past its last line
    kind: str  # "paragraph", "item", "table", "quote", "code"
    text: str  # its lines joined by "\n"


@dataclass(frozen=True)
class Decision:
    """One block's class and the reason: the feature that decided it (the strongest
    that fired) for a removed block, why it stayed for a kept one."""

    heading: str  # the source heading it sits under; "" at the article's start or end
    kind: str  # ENTRY, NOTE or CONTENT
    reason: str
    score: float
    excerpt: str
    words: int

    @property
    def removed(self) -> bool:
        return self.kind != CONTENT


# ---------------------------------------------------------------- entry features

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|januar|februar|märz|mai|juni|juli|oktober|dezember|"
    r"janvier|février|mars|avril|juin|juillet|août|septembre|octobre|novembre|décembre|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
    r"januari|februari|maj|augusti)\.?"
)
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_TLD = (
    r"com|org|net|gov|edu|int|mil|info|io|co|uk|us|de|fr|se|no|dk|fi|nl|be|it|es|pt|ch|at|pl|cz|ru|"
    r"jp|cn|kr|in|au|nz|ca|br|mx|ar|za|ie|eu|museum|news|tv|fm|ph|my|sg|hk|tw|gr|tr|il|ir|ua|hu|ro"
)
_LANGUAGES = (
    r"English|Swedish|German|French|Spanish|Portuguese|Italian|Dutch|Danish|Norwegian|Finnish|Icelandic|"
    r"Polish|Czech|Russian|Ukrainian|Greek|Turkish|Arabic|Hebrew|Persian|Chinese|Japanese|Korean|"
    r"Hindi|Bengali|Urdu|Indonesian|Malay|Tagalog|Filipino|Vietnamese|Thai|Latin|Hungarian|Romanian|Catalan"
)
# (name, weight, pattern). Searched in the block's text; each counts once.
ENTRY_FEATURES: tuple[tuple[str, float, re.Pattern], ...] = (
    ("URL or domain", 3.0, re.compile(rf"(?i)https?:|www\.|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:{_TLD})\b(?![-.]\w)")),
    (
        "identifier (ISBN, DOI, ISSN, pages, volume)",
        3.0,
        re.compile(r"(?i)\b(?:isbn|doi|issn|oclc|pmid|arxiv|jstor)\b|\bpp?\.[ \t]*\d|\bvol\.[ \t]*\d|\bno\.[ \t]*\d+[,.]"),
    ),
    (
        "access note (Retrieved, Accessed, Available, archived)",
        3.0,
        re.compile(
            r"(?i)\b(?:retrieved|accessed|archived|available[ \t]+(?:at|from|through|online|via|on|in)|last[ \t]+visited|"
            r"consulted[ \t]+on|abgerufen|consulté|hämtad|tillgänglig|consultado|disponible|geraadpleegd|besøkt)\b"
        ),
    ),
    ("format tag", 2.0, re.compile(r"(?i)[(\[][ \t]*(?:pdf|html?|video|audio|podcast|docx?|xlsx?|pptx?|epub|mp3|mp4|slides)[ \t]*[)\]]")),
    ("language tag", 1.5, re.compile(rf"[(\[][ \t]*(?:in[ \t]+)?(?:{_LANGUAGES})(?:[ \t]+language)?[ \t]*[)\]]")),
    (
        "short citation (Name Year, page)",
        3.0,
        re.compile(
            rf"^[ \t]*(?:[-*+^][ \t]+|\d{{1,3}}[.)]?[ \t]+)?[A-ZÀ-Þ][\w'’-]+(?:[ \t]+(?:and|&)[ \t]+[A-ZÀ-Þ][\w'’-]+|[ \t]+et[ \t]+al\.?)?,?"
            rf"[ \t]+\(?{_YEAR}[a-z]?\)?(?:[,:][ \t]*(?:pp?\.[ \t]*)?\d+(?:[-–]\d+)?)?\.?[ \t]*$"
        ),
    ),
    (
        "author list (Surname, Given)",
        1.5,
        re.compile(
            r"^[ \t]*(?:[-*+][ \t]+|\[?\d{1,3}[.)\]]?[ \t]+)?(?:\*\*)?[A-ZÀ-Þ][\w'’-]+,[ \t]+(?:[A-ZÀ-Þ]\.|[A-ZÀ-Þ][a-zà-ÿ]+[ .,;(])"
            r"|\bet[ \t]+al\b|\(eds?\.?\)|\beds?\.[ \t]|\b(?:edited|translated)[ \t]+by\b"
            r"|\([A-ZÀ-Þ][\w'’.-]+(?:[ \t][A-ZÀ-Þ][\w'’.-]+)*(?:[ \t]*(?:&|and|,)[ \t]*[A-ZÀ-Þ][\w'’.-]+(?:[ \t][A-ZÀ-Þ][\w'’.-]+)*)*\)"
            r"|[A-ZÀ-Þ][a-zà-ÿ]+[ \t]+[A-ZÀ-Þ][a-zà-ÿ]+[ \t]+&[ \t]+[A-ZÀ-Þ][a-zà-ÿ]+"
        ),
    ),
    (
        "publisher or outlet",
        1.0,
        re.compile(
            r"\b(?:Press|Publishing|Publishers?|Verlag|Éditions|Editions|Editorial|Ltd|Inc|GmbH|LLC|"
            r"Journal|Gazette|Herald|Tribune|Times|Post|Magazine|Review|Quarterly|Bulletin|Proceedings|"
            r"Agency|Newswire|Reuters|Associated[ \t]Press|AFP|BBC|Archives?|Catalogue|Catalog|Museum|Library)\b"
            r"|[A-ZÀ-Þ][a-zà-ÿ]+(?:[ \t][A-ZÀ-Þ][a-zà-ÿ]+)?:[ \t]+[A-ZÀ-Þ][\w&' -]+(?:Press|Books|Verlag|House|University|Publishing)?[,.][ \t]*(?:\(?"
            + _YEAR
            + r")"
        ),
    ),
    ("outlet then a dash", 1.5, re.compile(r"^[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)]?[ \t]+)?[^\s\d–—|#>][^–—\d\n]{0,60}?[ \t][–—-][ \t]+\S")),
    (
        "date",
        1.0,
        re.compile(
            rf"(?i)\b{_MONTH}[ \t]+\d{{1,2}},?[ \t]+{_YEAR}\b|\b\d{{1,2}}\.?[ \t]+{_MONTH}[ \t]+{_YEAR}\b"
            rf"|\b{_YEAR}-\d\d-\d\d\b|\b\d{{1,2}}/\d{{1,2}}/{_YEAR}\b|\({_MONTH}[ \t]+{_YEAR}\)"
        ),
    ),
    ("year", 0.5, re.compile(rf"\b{_YEAR}[a-z]?\b")),
    ("quoted title", 1.0, re.compile(r"[\"“„«‘][^\"“”„«»\n]{3,}[\"”“»’]")),
    ("italic title", 1.0, re.compile(r"(?<![*\w])\*(?!\*)[^*\n]{3,}?(?<![ *])\*(?![*\w])|(?<![_\w])_(?!_)[^_\n]{3,}?(?<![ _])_(?![_\w])")),
    ("leading entry number", 1.0, re.compile(r"^[ \t]*(?:\[\^?\w{1,4}\]|\^|\d{1,3}[ \t]+(?=[A-ZÀ-Þ\"“*_])|[a-z]\)[ \t])")),
    ("short dotted segments", 1.0, re.compile(r"^(?:[^.!?\n]{2,60}\.[ \t]+){2,}[^.!?\n]{2,60}\.?[ \t]*$")),
)
_WEIGHTS = {name: weight for name, weight, _ in ENTRY_FEATURES}
# A feature of this weight decides alone, and no content feature outweighs it.
DECISIVE_WEIGHT = 3.0
_BEFORE_NOTES = frozenset({ENTRY_FEATURES[0][0], ENTRY_FEATURES[1][0]})
# Under a source heading a list is most often the source list itself.
LIST_ITEM_PRIOR = 1.0


def _weight(name: str) -> float:
    return _WEIGHTS.get(name, 0.0)


# Shapes of content that look like entries: (name, weight subtracted, pattern).
CONTENT_FEATURES: tuple[tuple[str, float, re.Pattern], ...] = (
    (
        "a dated event (a timeline)",
        2.0,
        re.compile(
            rf"(?i)^[ \t]*(?:[-*+][ \t]+|\d{{1,3}}[.)][ \t]+)?(?:\*\*)?(?:(?:c\.|circa|early|late|mid-?)[ \t]*)?"
            rf"(?:\d{{1,2}}[ \t]+{_MONTH}[ \t]+|{_MONTH}[ \t]+(?:\d{{1,2}},?[ \t]+)?)?{_YEAR}s?(?:[–-]\d{{2,4}})?(?:\*\*)?[ \t]*[:–—-]"
            r"[ \t]*(?:\*\*)?[ \t]*\S+(?:[ \t]+\S+){3,}"
        ),
    ),
    (
        "a work and its year (a discography or list of works)",
        1.5,
        re.compile(
            rf"^(?=.*\b{_YEAR}\b)[ \t]*(?:[-*+][ \t]+|\d{{1,3}}[.)][ \t]+)?(?:{_YEAR}[ \t]*[:–—-][ \t]*)?(?:\*[^*\n]+\*|_[^_\n]+_|[\"“][^\"”\n]+[\"”])"
            r"(?:[ \t]*\([^()\n]{1,40}\))*"
            r"(?:[ \t]*[,;–—-][ \t]*(?:[A-Z][\w&'.-]*(?:[ \t]+[A-Z][\w&'.-]*){0,3}|album|single|EP|mixtape|film|novel|live album|compilation))*[ \t]*\.?[ \t]*$"
        ),
    ),
)

# Inside quotes or an italic title the words are the work's, not the writer's.
_TITLES_RE = re.compile(r"[\"“„«][^\"“”„«»\n]*[\"”“»]|(?<![*\w])\*(?!\*)[^*\n]+?\*(?![*\w])")
_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")
_FUNCTION_WORDS = frozenset(
    "the a an of in on at to for with by from and or but was were is are be been being had has have "
    "which that who whom whose it its as this these those their his her they he she not also than then "
    "when while after before during into over under between because about".split()
)


# A sentence has a verb; an entry's title rarely has one of these outside its quotes.
_FINITE_WORDS = frozenset(
    "is are was were has have had be been became becomes did does would could can will may might should "
    "remains remained describes described includes included shows showed".split()
)


def _prose_like(text: str) -> bool:
    words = _WORD_RE.findall(_TITLES_RE.sub(" ", text))
    if len(words) < PROSE_MIN_WORDS:
        return False
    lowered = [w.lower() for w in words]
    function = sum(1 for w in lowered if w in _FUNCTION_WORDS)
    return function >= PROSE_FUNCTION_SHARE * len(words) and any(w in _FINITE_WORDS for w in lowered)


def entry_score(text: str) -> tuple[float, str]:
    """The block's citation-entry score and its strongest feature ("" when none fired).
    A decisive feature (``DECISIVE_WEIGHT``) ends the count: the block is an entry."""
    score = 0.0
    best, best_weight = "", 0.0
    fired = set()
    for name, weight, pattern in ENTRY_FEATURES:
        if best_weight >= DECISIVE_WEIGHT:
            break
        if name == "year" and "date" in fired:
            continue
        if pattern.search(text):
            fired.add(name)
            score += weight
            if weight > best_weight:
                best, best_weight = name, weight
    return score, best


# ---------------------------------------------------------------- note features

# (name, weight, pattern). The first ones speak of the task itself and are read
# anywhere; the last two (``SOURCE_TALK_FEATURES``) speak of the text's own sources
# or research, which is apparatus under a source heading but the article's own
# (self-referential) writing elsewhere, so they are read only under one.
# The alternatives of "says it created or saved the article", each with what it cannot match
# without: groups of strings (lower case), one string of every group in the text. The whole
# pattern starts nowhere a scan could jump to, so on a long text each alternative is searched
# only where its strings are (``note_score``).
_MADE_VERBS = ("created", "saved", "written", "generated", "completed", "drafted", "produced", "compiled", "revised", "updated")
_MADE_ALTERNATIVES: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = (
    (
        (("been",), (*_MADE_VERBS, "finali")),
        r"\b(?:article|report|entry|draft|page|document|file|text|summary|piece)[ \t]+(?:has|have)[ \t]+been[ \t]+"
        r"(?:\w+[ \t]+)?(?:created|saved|written|generated|completed|drafted|produced|compiled|updated|revised|finali[sz]ed)\b",
    ),
    (
        (("i ", "i\t", "i've", "we ", "we\t", "we've"), (*_MADE_VERBS, "prepared", "researched", "finished")),
        r"\b(?:I|I've|I[ \t]+have|we[ \t]+have|we've)[ \t]+(?:\w+[ \t]+)?(?:created|saved|written|generated|completed|drafted|"
        r"produced|compiled|prepared|revised|updated|researched|finished)\b",
    ),
    (
        (("here", "below", "attached"), ("article", "report", "draft", "entry", "page", "summary", "overview", "write", "version")),
        r"\b(?:here[ \t]+is|here's|below[ \t]+is|attached[ \t]+is)[ \t]+(?:the|your|an?|my)[ \t]+(?:\w+[ \t-]+){0,3}?"
        r"(?:article|report|draft|entry|page|summary|overview|write-?up|version)\b",
    ),
    ((("saved",),), r"\bsaved[ \t]+(?:it[ \t]+)?(?:to|as|in|under)\b"),
    (((".md",),), r"\.md\b"),
)

NOTE_FEATURES: tuple[tuple[str, float, re.Pattern], ...] = (
    ("says it created or saved the article", 3.0, re.compile("(?i)" + "|".join(alternative for _, alternative in _MADE_ALTERNATIVES))),
    (
        "speaks of the rubric, guidelines or request",
        3.0,
        re.compile(
            r"(?i)\b(?:rubric|your[ \t]+(?:request|instructions?|guidelines?|requirements?|prompt|question|criteria|brief)"
            r"|the[ \t]+(?:user|prompt|task[ \t]+description|instructions[ \t]+(?:given|provided))|as[ \t]+(?:you[ \t]+)?requested"
            r"|you[ \t]+(?:asked|requested|wanted)|(?:style|writing)[ \t]+guidelines?[ \t]+(?:as[ \t]+)?(?:specified|provided|given|requested))\b"
        ),
    ),
    (
        "addresses the user",
        3.0,
        re.compile(
            r"(?i)\b(?:let[ \t]+me[ \t]+know|feel[ \t]+free|if[ \t]+you(?:'d|[ \t]+would)?[ \t]+like|i[ \t]+hope[ \t]+(?:this|that|it)"
            r"|happy[ \t]+to[ \t]+(?:help|adjust|revise|expand)|would[ \t]+you[ \t]+like|do[ \t]+you[ \t]+want|i[ \t]+can[ \t]+(?:also|further))\b"
        ),
    ),
    (
        "speaks of the sources provided",
        2.0,
        re.compile(
            r"(?i)\b(?:provided|supplied|given)[ \t]+(?:source|document|material|search[ \t]+result)s?\b|\bsources?[ \t]+(?:you[ \t]+)?(?:provided|supplied|given)\b"
        ),
    ),
    ("speaks as I or you", 1.0, re.compile(r"\b(?:I|I'm|I've|I'd|you|your|You|Your)\b")),
    (
        "praises its own writing",
        1.0,
        re.compile(
            r"(?i)\b(?:neutral[ \t]+(?:tone|point[ \t]+of[ \t]+view)|npov|encyclop(?:a)?edic[ \t]+(?:tone|style)|lead[ \t]+section|"
            r"well-?structured|comprehensive[ \t]+coverage|style[ \t]+guide(?:lines)?|verifiab\w+|proper[ \t]+citations?)\b"
        ),
    ),
)


SOURCE_TALK_FEATURES: tuple[tuple[str, float, re.Pattern], ...] = (
    (
        "reports on its own research",
        3.0,
        re.compile(
            r"(?i)\b(?:not|never)[ \t]+(?:been[ \t]+)?(?:publicly[ \t]+|independently[ \t]+|officially[ \t]+)?(?:listed|confirmed|verified|found|documented|available)"
            r"[ \t]+(?:in|via|by|through|from|on)[ \t]+(?:the[ \t]+)?(?:consulted|cited|available|provided|retrieved|reviewed|searched)\b"
            r"|\b(?:consulted|cited|reviewed|retrieved|searched)[ \t]+(?:\w+[ \t]+)?(?:sources|materials|metadata|documents|pages|platforms?|databases?|records)\b"
            r"|\btherefore[ \t]+(?:not[ \t]+included|omitted|excluded|left[ \t]+out)\b|\bcould[ \t]+not[ \t]+(?:be[ \t]+)?(?:verified|confirmed|located|accessed)\b"
        ),
    ),
    (
        "talks about this text's own sources",
        3.0,
        re.compile(
            r"(?i)\b(?:sources?|references?|citations?|bibliography|works)[ \t]+(?:\w+[ \t]+){0,3}?(?:listed|cited|given|used|consulted)[ \t]+"
            r"(?:below|above|here|in[ \t]+this|for[ \t]+this|throughout)"
            r"|\b(?:this|the[ \t]+present)[ \t]+(?:article|report|entry|overview|summary|page|profile|table|section)[ \t]+"
            r"(?:\w+[ \t]+)?(?:draws|drew|is[ \t]+based|relies|relied|was[ \t]+compiled|was[ \t]+written|was[ \t]+researched|cites|uses)\b"
            r"|\b(?:the[ \t]+)?following[ \t]+(?:\w+[ \t]+)?(?:sources|references|works|materials)[ \t]+(?:were|was|are|have)\b"
            r"|\b(?:sourced|referenced|cited|documented|supported|listed)[ \t]+(?:\w+[ \t]+)?(?:below|above|here\b|in[ \t]+the[ \t]+(?:references|sources|bibliography|list))"
        ),
    ),
)


def _lowered(pattern: re.Pattern) -> tuple[re.Pattern, bool]:
    """A case-insensitive pattern as a case-sensitive one for lower-cased text (twice
    as fast in ``re``), and True; any other pattern as it is, and False."""
    source = pattern.pattern
    if not source.startswith("(?i)"):
        return pattern, False
    # Lower-casing a pattern is safe only without upper-case escapes (\S, \W, ...).
    assert not re.search(r"\\[A-Z]", source), source
    return re.compile(source[4:].lower()), True


def _by_weight(features: tuple) -> tuple[tuple, tuple]:
    """The features, heaviest first (each with its pattern for lower-cased text where
    it has one), and for each the weight of it and those after it."""
    ordered = tuple((name, weight, *_lowered(pattern)) for name, weight, pattern in sorted(features, key=lambda f: -f[1]))
    return ordered, tuple(sum(f[1] for f in ordered[k:]) for k in range(len(ordered)))


_BY_WEIGHT_ALL = _by_weight(NOTE_FEATURES + SOURCE_TALK_FEATURES)
# Features searched alternative by alternative: (what it needs, its pattern for lower-cased text).
_NOTE_PARTS = {
    NOTE_FEATURES[0][0]: tuple((needs, _lowered(re.compile("(?i)" + alternative))[0]) for needs, alternative in _MADE_ALTERNATIVES)
}
_BY_WEIGHT_ENDS = _by_weight(NOTE_FEATURES)

# Words one of which each note feature needs (lower case): a substring test in C
# spares most texts the slower case-insensitive search.
_NOTE_ANCHORS = {
    "says it created or saved the article": (
        "created",
        "saved",
        "written",
        "generated",
        "completed",
        "drafted",
        "produced",
        "compiled",
        "updated",
        "revised",
        "finali",
        "prepared",
        "researched",
        "finished",
        # "here[ \t]+is" or "here's" (not "here" alone: "there" and "where" would pass)
        "here is",
        "here\tis",
        "here  ",
        "here \t",
        "here\t ",
        "here\t\t",
        "here's",
        "below is",
        "attached is",
        ".md",
    ),
    "speaks of the rubric, guidelines or request": (
        "rubric",
        "your ",
        "the user",
        "the prompt",
        "task",
        "instructions",
        "request",
        "asked",
        "wanted",
        "guideline",
    ),
    "addresses the user": ("let me", "feel free", "if you", "hope", "happy to", "would you", "do you", "i can"),
    "speaks of the sources provided": ("provided", "supplied", "given"),
    "speaks as I or you": ("i", "you"),
    "praises its own writing": (
        "neutral",
        "npov",
        "encyclop",
        "lead section",
        "structured",
        "comprehensive",
        "style guide",
        "verifiab",
        "proper citation",
    ),
    "reports on its own research": ("not", "never", "consulted", "cited", "reviewed", "retrieved", "searched", "therefore", "could not"),
    "talks about this text's own sources": ("below", "above", "here", "this", "throughout", "present", "following", " in the "),
}


def note_score(text: str, *, under_source_heading: bool = True, at_least: float = 0.0) -> tuple[float, str]:
    """The block's agent's-note score and its strongest feature ("" when none fired).
    Talk of the text's own sources counts only ``under_source_heading``. With
    ``at_least``, stops (and gives a score below it) as soon as the features left
    cannot bring the score there."""
    score = 0.0
    best, best_weight = "", 0.0
    features = _BY_WEIGHT_ALL if under_source_heading else _BY_WEIGHT_ENDS
    low = text.lower()
    for left, (name, weight, pattern, on_lower) in zip(features[1], features[0]):
        if score + left < at_least:
            break
        anchors = _NOTE_ANCHORS.get(name)
        if anchors and not any(map(low.__contains__, anchors)):
            continue
        parts = _NOTE_PARTS.get(name)
        if parts is not None:
            fired = any(all(any(map(low.__contains__, group)) for group in needs) and part.search(low) for needs, part in parts)
        else:
            fired = pattern.search(low if on_lower else text)
        if fired:
            score += weight
            if weight > best_weight:
                best, best_weight = name, weight
    return score, best


# ---------------------------------------------------------------- tables

# A table is a citation list when a header cell names sources, links or access dates.
_CITATION_COLUMN_RE = re.compile(
    r"(?:#|no\.?|sources?|source\(s\)|references?|refs?\.?|citations?|cite|url|urls|links?|"
    r"publishers?|publication|accessed|access date|date accessed|retrieved|doi|isbn)"
)


def _table_verdict(text: str) -> tuple[str, str, float]:
    lines = text.split("\n")
    header = lines[0].strip()
    cells = [" ".join(c.replace("*", " ").split()).lower().strip(" :") for c in CELL_SPLIT_RE.split(header.strip("|"))]
    if any(_CITATION_COLUMN_RE.fullmatch(cell) for cell in cells if cell):
        return ENTRY, "table whose header names sources or links", 3.0
    body = lines[2:] if len(lines) > 2 and ALIGN_ROW_RE.fullmatch(lines[1]) else lines[1:]
    if body and all(entry_score(row)[1] == "URL or domain" for row in body):
        return ENTRY, "table of URLs", 3.0
    return CONTENT, "a table of data", 0.0


# ---------------------------------------------------------------- one block


def classify_block(block: Block, *, notes: bool = True) -> tuple[str, str, float]:
    """(class, reason, score) of one block under a source heading. ``notes``: look
    for agents' notes too (off for the human-written reference article)."""
    if block.kind == "table":
        return _table_verdict(block.text)
    if block.kind == "code":
        return ENTRY, "code block (a citation format such as BibTeX)", 3.0
    text = block.text
    score, best = entry_score(text)
    if best in _BEFORE_NOTES:  # a URL or an identifier: an entry, whatever else it says
        return ENTRY, best, score
    if notes:
        n_score, n_best = note_score(text, at_least=NOTE_THRESHOLD)
        if n_score >= NOTE_THRESHOLD:
            return NOTE, n_best, n_score
    if block.kind == "item":
        score += LIST_ITEM_PRIOR
        best = best or "an item of a list under a source heading"
    prose = _prose_like(text)
    # A URL, an identifier or an access note decides whatever the prose around it.
    if prose and _weight(best) < DECISIVE_WEIGHT:
        score -= PROSE_DISCOUNT
    for name, weight, pattern in CONTENT_FEATURES:
        if pattern.search(text) and _weight(best) < DECISIVE_WEIGHT:
            score -= weight
            if score < ENTRY_THRESHOLD:
                return CONTENT, f"{name} (entry score {score:.1f})", score
    if score >= ENTRY_THRESHOLD:
        return ENTRY, best, score
    if prose:
        return CONTENT, "prose about the subject" + (f" (entry score {score:.1f} after the prose discount)" if best else ""), score
    if best:
        return CONTENT, f"too few entry features ({best}: score {score:.1f} < {ENTRY_THRESHOLD})", score
    return CONTENT, "no entry feature", score


# ---------------------------------------------------------------- cutting lines into blocks

_ITEM_RE = re.compile(r"[ ]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
RULE_RE = re.compile(r"[ ]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})")


def split_blocks(lines: list[str], start: int, end: int, skip: set[int] = frozenset()) -> list[Block]:
    """The blocks of ``lines[start:end]``: each paragraph line, each list item with its
    indented continuation lines, each table, each block quote, each stashed code
    block. Lines in ``skip`` (headings) and blank lines separate blocks and belong to none."""
    blocks: list[Block] = []
    i = start
    while i < end:
        line = lines[i]
        if not line or i in skip or RULE_RE.fullmatch(line):
            i += 1
            continue
        body = line.lstrip(" \t")
        j = i + 1
        if body[:1] == "|":
            while j < end and j not in skip and lines[j].lstrip(" \t")[:1] == "|":
                j += 1
            kind = "table"
        elif body[:1] == ">":
            while j < end and j not in skip and lines[j].lstrip(" \t")[:1] == ">":
                j += 1
            kind = "quote"
        elif body[:1] == "\x02" and body.endswith("\x03"):
            kind = "code"
        elif _ITEM_RE.match(line):
            # Its indented lines, and lazy continuation lines: the next lines that
            # start no block of their own (CommonMark puts them in the item).
            indent = len(line) - len(body)
            while j < end and j not in skip and lines[j]:
                nxt = lines[j]
                if (len(nxt) - len(nxt.lstrip(" \t"))) <= indent and (_ITEM_RE.match(nxt) or nxt.lstrip(" \t")[:1] in ("|", ">", "\x02")):
                    break
                j += 1
            kind = "item"
        else:
            kind = "paragraph"
        blocks.append(Block(i, j, kind, "\n".join(lines[i:j])))
        i = j
    return blocks


def ends_with_colon(text: str) -> bool:
    return text.rstrip(" \t*_").endswith(":")


def classify_blocks(lines: list[str], blocks: list[Block], *, notes: bool) -> list[tuple[str, str, float]]:
    """``classify_block`` for each block, then two rules of context: in a run of
    entries (``CONTEXT_ENTRY_SHARE`` of the section's paragraphs and items, at least
    two) a block of theirs scoring ``CONTEXT_ENTRY_MIN`` that does not read as prose
    is an entry too; a list that follows a note ending with ":" (blank lines aside)
    is part of that note."""
    verdicts = [classify_block(b, notes=notes) for b in blocks]
    textual = [k for k, b in enumerate(blocks) if b.kind in ("paragraph", "item")]
    entries = sum(1 for k in textual if verdicts[k][0] == ENTRY)
    if entries >= 2 and entries >= CONTEXT_ENTRY_SHARE * len(textual):
        for k in textual:
            kind, _, score = verdicts[k]
            if kind == CONTENT and score >= CONTEXT_ENTRY_MIN and not _prose_like(blocks[k].text):
                verdicts[k] = (ENTRY, f"in a run of entries ({entry_score(blocks[k].text)[1]}: score {score:.1f})", score)
    for k in range(1, len(blocks)):
        if blocks[k].kind != "item" or verdicts[k][0] == NOTE:
            continue
        prev = k - 1
        # Only the items of one list: the previous block is an item of it or the note itself.
        if any(lines[x] for x in range(blocks[prev].end, blocks[k].start)) and blocks[prev].kind != "paragraph":
            continue
        if verdicts[prev][0] == NOTE and (blocks[prev].kind == "item" or ends_with_colon(blocks[prev].text)):
            verdicts[k] = (NOTE, "continues the agent's note above (a list after its colon)", verdicts[prev][2])
    return verdicts


def excerpt(text: str, limit: int = 100) -> str:
    flat = " ".join(text.replace("\x02", "").replace("\x03", "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def decision(heading: str, block: Block, verdict: tuple[str, str, float]) -> Decision:
    kind, reason, score = verdict
    return Decision(heading, kind, reason, round(score, 2), excerpt(block.text), len(_WORD_RE.findall(block.text)))
