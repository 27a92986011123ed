"""Blocks under a heading that announces sources, and agents' notes at an article's ends (issue 33).

A corpus written for this test (no benchmark text): each shape of citation entry and
agent's note in several variants (publishers, languages, date formats, dashes,
numbering, with and without italics), and content that looks close to them (a credits
table under a bold caption, a discography with years, a timeline, a "Sources" section
of historiography prose, a "Notes" section of explanatory footnotes). Every entry and
note must go, every content block must stay, and every decision must be explained.
"""

import random

import pytest

from annotate.cleaning import clean_article, cleaning_decisions
from annotate.cleaning.blocks import CONTENT, ENTRY, NOTE

LEAD = (
    "# Harbour Bridge\n\n"
    "The Harbour Bridge is a road bridge across the inner sound, opened in 1932 after four years of work.\n\n"
    "## History\n\n"
    "The first crossing was a ferry run by the town from 1850 until the bridge opened.\n\n"
    "Traffic grew quickly, and a second carriageway was added in 1968."
)

# One source per line, no list marker: site, agency, reporter, quoted headline, date.
UNMARKED_LINES = [
    'harbourwatch.no – Nordic Wire (Kari Lund) - "Ferry strike ends after nine days" (Mar 3, 2019)',
    "valleynews.co.uk — Press Association (T. Hughes) – “Flood defences approved for the lower valley” (14 July 2016)",
    "tagesblatt.de - dpa (M. Krause) - „Neue Brücke am Hafen eröffnet“ (2. Mai 2021)",
    'elfaro-archivo.es – Agencia Costa – "Inauguran el nuevo puente" (5 de mayo de 2020)',
]
# A number, a space and an entry; numbers out of order and repeated.
NUMBERED_SPACE = [
    '3 Antiquarian Books Ltd. "Letters from the Coast by HARLOW, James." Marketplace, 1902\\.',
    '1 Harbour Maps Ltd. "Chart of the Inner Sound by PEEL, Anne." Catalogue, 1875.',
    '3 Old Press Inc. "Sermons on the Sea by GRAY, Thomas." Listing, 1811.',
    "12 Fischer Verlag. *Reise nach Norden* von BRANDT, Otto. Katalog, 1899.",
]
# Outlet, authors and a date, a quoted title, a description in brackets.
OUTLET_AUTHORS = [
    'Coastal Herald – Mia Svensson & Lars Berg (Nov. 4, 2025). "Council backs harbour plan." '
    "(Report on the vote with quotes from councillors) – Coastal Herald (coastalherald.org).",
    "The Evening Post — J. Doe and R. Roe (4 November 2025). “Turnout hits a record.” [Analysis of the count] — The Evening Post.",
    'Radio Nord – Editorial team (2025-11-04). "Polls close across the county." (Live blog of the night) – Radio Nord.',
]
# A short entry with a format tag.
FORMAT_TAGGED = [
    "Media centre – Pre-race notes (course highlights). (PDF)",
    "Federation press office – Season review 2024 [PDF]",
    "Tourism board – Visitor figures for the summer season (XLSX)",
    "Race organiser – Technical guide. (pdf)",
]
# Another language, with a museum or an archive as the source.
OTHER_LANGUAGE = [
    'Museum catalogue. "Skålen är gjord av brons och hittades år 1902." (Swedish) Available through the object descriptions.',
    "Stadtarchiv. „Die Brücke wurde im Jahr 1888 eröffnet.“ (German) Abrufbar über die Bestandsbeschreibung.",
    "Musée régional. « La coupe fut trouvée en 1902. » (French) Disponible via les notices d'objets.",
]
# Familiar shapes, marked or not.
CLASSIC = [
    "- Lund, Per (1990). *A History of the Inner Sound*. Oslo: Fjord Press. ISBN 978-82-00-00000-0.",
    "1. Berg, A. *Bridges of the North*. Bergen University Press, 2001, pp. 45–67.",
    "[4] Hall, R. “The Ferry Years.” *Coastal Review* 12 (1988): 3–19. Retrieved 2 May 2020.",
    "* Nilsen & Dahl 2004, p. 12.",
]
ALL_ENTRIES = UNMARKED_LINES + NUMBERED_SPACE + OUTLET_AUTHORS + FORMAT_TAGGED + OTHER_LANGUAGE + CLASSIC

CLOSING_NOTES = [
    (
        "The article has been successfully created and saved. It follows the style guidelines as specified in your rubric:",
        [
            "- **Lead section**: a concise summary of the bridge and its significance",
            "- **Coverage**: history, design and traffic are all covered",
            "- **Neutrality**: written from a neutral point of view throughout",
        ],
    ),
    (
        "I have written the article and saved it to harbour_bridge.md. As you requested, it:",
        [
            "1. opens with a lead that defines the subject",
            "2. keeps every statement tied to a source",
        ],
    ),
    ("Here is the final version of the report. Let me know if you would like any section expanded.", []),
]


def _article(source_heading: str, body: list[str], tail: str = "") -> str:
    return LEAD + f"\n\n{source_heading}\n\n" + "\n".join(body) + (f"\n\n{tail}" if tail else "") + "\n"


def _gone(shown: str, text: str) -> bool:
    # The part that no cleaning rule other than the classifier would remove.
    words = [w for w in text.replace("*", " ").split() if len(w) > 3 and "." not in w and '"' not in w][:3]
    return not all(w in shown for w in words)


@pytest.mark.parametrize(
    "heading",
    ["## References", "## 9. References and Data Sources", "### SOURCES", "**Works cited**", "## Källor", "## Referencias", "Sources:"],
)
@pytest.mark.parametrize(
    "entries",
    [UNMARKED_LINES, NUMBERED_SPACE, OUTLET_AUTHORS, FORMAT_TAGGED, OTHER_LANGUAGE, CLASSIC],
    ids=["unmarked", "numbered-space", "outlet-authors", "format-tag", "other-language", "classic"],
)
def test_it_removes_every_entry_shape_under_any_source_heading(heading, entries):
    raw = _article(heading, entries)
    shown = clean_article(raw, "Harbour Bridge")
    leftovers = [e for e in entries if not _gone(shown, e)]
    assert not leftovers, f"shown under {heading!r}:\n" + "\n".join(leftovers)
    assert "second carriageway" in shown  # the article's own prose stays
    # Nothing is left under the heading, so the heading goes too.
    assert heading.strip("#*: ").split(". ")[-1].lower() not in shown.lower().split("# harbour bridge", 1)[1]


def test_it_reads_a_line_right_after_a_list_item_as_part_of_it():
    # A lazy continuation line, as CommonMark renders it: one block with the item.
    decisions = cleaning_decisions(_article("## References", [CLASSIC[1], CLASSIC[2]]))
    assert [d.kind for d in decisions] == [ENTRY] and decisions[0].excerpt.startswith("1. Berg")


def test_it_removes_entries_separated_by_blank_lines_and_in_lists():
    body = []
    for i, entry in enumerate(ALL_ENTRIES):
        body.append(entry if i % 3 else f"- {entry}")
        body.append("")
    shown = clean_article(_article("## References", body), "Harbour Bridge")
    leftovers = [e for e in ALL_ENTRIES if not _gone(shown, e)]
    assert not leftovers, "\n".join(leftovers)


@pytest.mark.parametrize("note, items", CLOSING_NOTES)
@pytest.mark.parametrize("place", ["under references", "at the end", "after a rule"])
def test_it_removes_the_agents_closing_message(note, items, place):
    lines = [note, *items]
    if place == "under references":
        raw = _article("## References", [UNMARKED_LINES[0], "", *lines])
    elif place == "at the end":
        raw = LEAD + "\n\n" + "\n".join(lines) + "\n"
    else:
        raw = LEAD + "\n\n---\n\n" + "\n".join(lines) + "\n"
    shown = clean_article(raw, "Harbour Bridge")
    for line in lines:
        assert _gone(shown, line), f"shown: {line!r}"
    assert shown.rstrip().endswith("added in 1968.")
    decisions = [d for d in cleaning_decisions(raw) if d.kind == NOTE]
    assert len(decisions) == len(lines) and all(d.reason for d in decisions)


@pytest.mark.parametrize(
    "opening",
    [
        "Certainly! Here is the Wikipedia-style article you asked for:",
        "Below is the draft article on the bridge, written to your guidelines.",
    ],
)
def test_it_removes_an_opening_note_to_the_user(opening):
    raw = LEAD.replace("# Harbour Bridge\n\n", f"# Harbour Bridge\n\n{opening}\n\n---\n\n")
    shown = clean_article(raw, "Harbour Bridge")
    assert opening[:24] not in shown
    assert shown.startswith("# Harbour Bridge\n\nThe Harbour Bridge is a road bridge")


def test_it_keeps_self_reference_inside_the_articles_prose():
    raw = (
        LEAD.replace(
            "Traffic grew quickly",
            "This report draws on the provided sources for the early years.\n\nTraffic grew quickly",
        )
        + "\n\nAs this article shows, the bridge changed the town; the provided sources agree on little else.\n"
    )
    shown = clean_article(raw, "Harbour Bridge")
    assert "This report draws on the provided sources" in shown
    assert "As this article shows" in shown


CREDITS = [
    "**Table 2: Production Credits**",
    "",
    "| Role | Name | Country |",
    "|---|---|---|",
    "| Director | Anna Berg | Norway |",
    "| Producer | Li Wei | China |",
    "| Composer | Tomás Ruiz | Spain |",
]
DISCOGRAPHY = ["### Discography", "", "- *Harbour Lights* (1991)", "- *Inner Sound* (1994), Fjord Records", "- 1998: *Ferry Songs* (album)"]
TIMELINE = [
    "- 12 May 1928 – Work begins on the southern pier after the council approves the loan.",
    "- 1932: The bridge opens to traffic with a ceremony on the quay.",
    "- March 1968 – A second carriageway is added on the eastern side.",
]
HISTORIOGRAPHY = [
    "The earliest accounts of the crossing come from two parish chronicles written a generation later, and historians have "
    "long debated how far their authors relied on what ferrymen remembered.",
    "Modern scholarship has placed more weight on the surviving toll ledgers, which record the traffic in some detail, and "
    "on the engineers' correspondence, which was only catalogued in the 1970s.",
]
FOOTNOTES = [
    "a. The 1911 census lists the village under its older spelling, which was dropped when the parish was merged in 1923.",
    "b. Distances are given along the old coach road, which is longer than the modern route by about two kilometres.",
    "1. The toll was abolished in 1961, but the booths stood until the widening work of 1968.",
]


@pytest.mark.parametrize(
    "heading, content",
    [
        ("## 9. References and Data Sources", CREDITS),
        ("## Notes and references", DISCOGRAPHY),
        ("## Notes", TIMELINE),
        ("## Sources", HISTORIOGRAPHY),
        ("## Notes", FOOTNOTES),
    ],
    ids=["credits", "discography", "timeline", "historiography", "footnotes"],
)
@pytest.mark.parametrize("is_reference", [False, True])
def test_it_keeps_content_that_looks_like_entries(heading, content, is_reference):
    entries = ["", UNMARKED_LINES[1], OUTLET_AUTHORS[0], CLASSIC[0]]
    raw = _article(heading, content + entries)
    shown = clean_article(raw, "Harbour Bridge", is_reference=is_reference)
    for line in content:
        if line.strip() and not line.startswith("|---"):
            assert line.strip("*# -").split("(")[0].strip() in shown, f"lost: {line!r}"
    assert heading.lstrip("# ") in shown  # the heading stays above its content
    leftovers = [e for e in entries if e and not _gone(shown, e)]
    assert not leftovers, "\n".join(leftovers)


def test_it_explains_every_decision_under_a_source_heading():
    spaced = [line for entry in ALL_ENTRIES for line in (entry, "")]
    body = [*CREDITS, "", *TIMELINE, "", *spaced, CLOSING_NOTES[0][0], *CLOSING_NOTES[0][1]]
    decisions = cleaning_decisions(_article("## 9. References and Data Sources", body))
    kinds = [d.kind for d in decisions]
    assert kinds.count(CONTENT) == 1 + len(TIMELINE)  # the table (its caption is a heading over it), the timeline
    assert kinds.count(ENTRY) == len(ALL_ENTRIES)
    assert kinds.count(NOTE) == 1 + len(CLOSING_NOTES[0][1])
    assert all(d.reason and d.excerpt and d.heading.startswith("9. References and Data Sources") for d in decisions)
    table = next(d for d in decisions if d.excerpt.startswith("| Role"))
    assert table.reason == "a table of data" and not table.removed
    by_url = next(d for d in decisions if d.excerpt.startswith("harbourwatch.no"))
    assert by_url.reason == "URL or domain" and by_url.removed


def test_it_reads_a_heading_for_source_words_the_same_whatever_its_case_and_script():
    # The fast test for ASCII headings (lower-cased, case-sensitive) answers as the
    # case-insensitive pattern does, on headings of every case and a few scripts.
    from annotate.cleaning import sections

    rng = random.Random(5)
    pieces = [
        "refer",
        "SOURC",
        "Biblio",
        "cit",
        "NoTe",
        "how this",
        "FACT",
        "verif",
        "Quell",
        "källor",
        "ИСТОЧ",
        "参考",
        "ſourc",
        "K",
        "ı",
        "x",
        " ",
        "7",
    ]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        text = "".join(c.upper() if rng.random() < 0.3 else c for c in text)
        assert sections._ref_hint(text) == bool(sections._REF_HINT_RE.search(text)), text
        assert sections._meta_hint(text) == bool(sections._META_HINT_RE.search(text)), text
