"""annotate.cleaning: what citation stripping leaves behind (issue 10, item 1).

Caption lines and table rows that only named a source, agents' notes on how they
sourced the article, a "Sources" section that is content, and scraping leftovers
(empty "Ref." columns, doubled flag names, sentences glued where a marker was).
"""

import pytest

from annotate.cleaning import clean_article, strip_citations

TABLE = "| Year | Crew |\n|---|---|\n| 1934 | 44 |\n| 1942 | 75 |"

# ------------------------------------------------------------------ caption residue


@pytest.mark.parametrize(
    "caption",
    [
        "*Source: [4](https://example.org/tally)*",
        "*Source: [1](https://example.org/a) *",
        "Source: 5",
        "Source: 22",
        "Sources: [3], [4]",
        "**Sources:** [3][7]",
        "_Data source: [2]_",
        "Ref. 12",
        "References: 1, 2",
        "CITATION: [9]",
        "Source(s): [1]",
        "- Source: [6]",
        "> *Source: 3*",
        "*Sources*",
    ],
)
def test_it_drops_a_caption_line_left_with_only_a_source_label(caption):
    text = f"{TABLE}\n\n{caption}\n\n## Later years\n\nThe crew was cut in 1950."
    assert strip_citations(text) == f"{TABLE}\n\n## Later years\n\nThe crew was cut in 1950."


@pytest.mark.parametrize(
    "line",
    [
        "Source: the 1911 census counted 4,000 people.",
        "*Source: harbour master's log, 1942*",
        "Sources of the river lie in the hills [3].",
        "Sources of income were few: 3 farms and a mill.",
        "References to the ship appear in two novels.",
        "- Source code of the game was released in 2004.",
    ],
)
def test_it_keeps_a_line_with_words_after_a_source_label(line):
    out = strip_citations(f"Intro.\n\n{line}\n\nOutro.")
    assert out == f"Intro.\n\n{line.replace(' [3]', '')}\n\nOutro."


def test_it_drops_a_table_row_holding_only_a_source_label():
    text = "| Year | Winner | Team |\n|---|---|---|\n| 2021 | Ana Lopes | Falcon |\n| Source: |  |  |"
    assert strip_citations(text) == "| Year | Winner | Team |\n|---|---|---|\n| 2021 | Ana Lopes | Falcon |"


def test_it_drops_a_table_row_whose_source_citation_was_stripped():
    text = "| Year | Winner |\n|---|---|\n| 2021 | Ana Lopes |\n| **Sources:** [4], [5] | |"
    assert strip_citations(text) == "| Year | Winner |\n|---|---|\n| 2021 | Ana Lopes |"


def test_it_keeps_a_table_row_with_a_source_label_and_content():
    text = "| Kind | Value |\n|---|---|\n| Source: | River Aln |\n| Source | 3 |"
    assert strip_citations(text) == text


def test_it_keeps_a_header_row_named_source():
    text = "| Source: |  |\n|---|---|\n| spring | 4 |"
    assert strip_citations(text) == text


def test_it_removes_the_space_left_inside_emphasis_by_a_removed_citation():
    assert strip_citations("*Source: the harbour log [3]*") == "*Source: the harbour log*"


# ------------------------------------------------------------------ source commentary

ARTICLE = "# Bridge\n\nThe bridge opened in 1932.\n\n## History\n\nIt was rebuilt in 1990."
REFS = "## References\n\n1. [Annual report](https://example.com/report)"


@pytest.mark.parametrize(
    "section",
    [
        "## Notes on sources and verification\n\n- The county bridge register was consulted for dates.\n"
        "- Figures were cross-checked against the state engineer's annual reports.",
        "## Notes on research coverage and sources\n\nThis article relies on council minutes and local press; "
        "few contemporary accounts survive.",
        "## Methodology\n\nDates were verified against two independent registers.",
        "## Research notes\n\nThe builder's records were accessed through the county archive.",
        "## How this article was researched\n\nWe read the council minutes and the engineer's reports.",
        "## Citation and style guidance\n\n- Cite every figure to a primary register.",
        "## Sources\n\nThis report draws on the county register and two newspaper archives, which together "
        "give the dates of construction, the cost of the works and the names of the engineers involved, "
        "although neither covers the rebuilding in any depth.",
    ],
)
def test_it_drops_trailing_source_commentary(section):
    assert strip_citations(f"{ARTICLE}\n\n{section}\n\n{REFS}") == ARTICLE
    assert strip_citations(f"{ARTICLE}\n\n{section}") == ARTICLE


def test_it_drops_source_commentary_after_the_references():
    text = f"{ARTICLE}\n\n{REFS}\n\n## Verification notes\n\nAll dates were verified in the register."
    assert strip_citations(text) == ARTICLE


def test_it_keeps_a_sources_heading_in_the_middle_of_the_article():
    text = (
        "# River\n\nA river.\n\n## Sources of the river\n\nIts sources were verified by a survey in 1870.\n\n## Course\n\nIt flows north."
    )
    assert strip_citations(text) == text


def test_it_keeps_a_trailing_section_about_sources_without_commentary_words():
    text = f"{ARTICLE}\n\n## Water sources\n\nThe town draws water from two springs and a reservoir."
    assert strip_citations(text) == text


def test_it_keeps_an_article_whose_title_mentions_sources():
    text = "# Source guide to the bridge\n\nThis report was verified by the county.\n\n## History\n\nBuilt in 1932."
    assert strip_citations(text) == text


def test_it_keeps_source_commentary_in_the_reference_article():
    text = f"{ARTICLE}\n\n## Notes on sources\n\nThe dates were verified by the county register."
    assert strip_citations(text, is_reference=True) == text
    assert "Notes on sources" in clean_article(text, "Bridge", is_reference=True)
    assert "Notes on sources" not in clean_article(text, "Bridge")


# ------------------------------------------------------------------ a "Sources" section that is content

HISTORIOGRAPHY = (
    "## Sources\n\n"
    "### Written\n\n"
    "Two chronicles describe the siege. The older, compiled by a monk of the abbey some forty years after "
    "the events, gives the numbers of the besiegers and the length of the siege, while the later one, "
    "written at the royal court, dwells on the negotiations that ended it.\n\n"
    "#### Campaign\n\n"
    "For the campaign that preceded the siege the chronicles are silent, and historians have relied on "
    "letters of the garrison commander, of which three survive in copies made in the following century.\n"
)


def test_it_keeps_a_sources_section_of_prose_paragraphs_with_its_sub_sections():
    text = f"{ARTICLE}\n\n{HISTORIOGRAPHY}\n{REFS}"
    assert strip_citations(text) == f"{ARTICLE}\n\n{HISTORIOGRAPHY}".rstrip("\n")


def test_it_keeps_a_reference_articles_sources_section_even_with_commentary_words():
    section = HISTORIOGRAPHY.replace("Two chronicles", "Two chronicles, both cited by later writers,")
    text = f"{ARTICLE}\n\n{section}"
    assert strip_citations(text, is_reference=True) == text.rstrip("\n")


@pytest.mark.parametrize(
    "body",
    [
        "- Smith, J. *The Siege*. Oxford, 1990.\n- Jones, K. *Walls*. London, 2001.",
        "1. Smith, J. *The Siege*. Oxford, 1990.",
        "Smith, J. (1990). *The Siege*. Oxford.\n\nJones, K. (2001). *Walls*. London.",
        "A long annotated entry that reads almost like prose and goes on to describe the book, its author, "
        "its publisher and its many merits at great length: https://example.com/book",
        "Smith, J. (1990). *The Siege of the Town and the Campaign that Preceded It, with Maps and Plates "
        "and an Appendix of Letters from the Garrison Commander and Others*. Oxford University Press. "
        "ISBN 978-0-00-000000-0.",
    ],
)
def test_it_still_drops_a_sources_section_of_entries(body):
    assert strip_citations(f"{ARTICLE}\n\n## Sources\n\n{body}") == ARTICLE


# ------------------------------------------------------------------ tables: empty source columns


@pytest.mark.parametrize("name", ["Ref.", "Ref", "Refs", "References", "Source(s)", "Notes", "**Citations**"])
def test_it_drops_a_source_column_left_empty(name):
    text = f"| Year | Crew | {name} |\n|---|---|---|\n| 1934 | 44 | [1] |\n| 1942 | 75 | [2], [3] |"
    assert strip_citations(text) == "| Year | Crew |\n|---|---|\n| 1934 | 44 |\n| 1942 | 75 |"


def test_it_drops_an_empty_source_column_in_the_middle_keeping_alignment():
    text = "| Year | Ref. | Crew |\n|:---|:---:|---:|\n| 1934 |  | 44 |"
    assert strip_citations(text) == "| Year | Crew |\n|:---|---:|\n| 1934 | 44 |"


@pytest.mark.parametrize(
    "table",
    [
        "| Year | Notes |\n|---|---|\n| 1934 | Launched in March |\n| 1942 |  |",  # notes with content
        "| Year | Event |\n|---|---|\n| 1934 |  |\n| 1942 |  |",  # empty, but not a source column
        "| Notes |\n|---|\n|  |",  # the only column
        "Year | Ref.\n---|---\n1934 |",  # no outer pipes: left alone
    ],
)
def test_it_keeps_other_columns(table):
    assert strip_citations(table) == table


# ------------------------------------------------------------------ tables: doubled flag names


def test_it_collapses_a_flag_name_said_twice_in_a_table_column():
    text = (
        "| Country | Delegation |\n|---|---|\n| Albania Albania | The president |\n"
        "| Antigua and Barbuda Antigua and Barbuda | The governor |\n"
        "| United States of America United States of America | The vice president |\n"
        "| Taiwan Taiwan (Republic of China) | An envoy |\n| European Commission | Its president |"
    )
    assert strip_citations(text) == (
        "| Country | Delegation |\n|---|---|\n| Albania | The president |\n"
        "| Antigua and Barbuda | The governor |\n| United States of America | The vice president |\n"
        "| Taiwan (Republic of China) | An envoy |\n| European Commission | Its president |"
    )


@pytest.mark.parametrize(
    "table",
    [
        "| Town | State |\n|---|---|\n| Walla Walla | Washington |\n| Yakima | Washington |",  # one only
        "| Track | Game |\n|---|---|\n| Moo Moo Meadows | Wii |\n| Moo Moo Farm | 64 |",  # a name goes on
        "| Note |\n|---|\n| the the |\n| a a |",  # not capitalised names
    ],
)
def test_it_keeps_a_doubled_word_that_is_a_name(table):
    assert strip_citations(table) == table


def test_it_keeps_a_doubled_name_outside_tables():
    text = "Albania Albania is how the caption read.\n\n- France France"
    assert strip_citations(text) == text


# ------------------------------------------------------------------ glued sentences


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("They wrote a report on it.[3]It was long.", "They wrote a report on it. It was long."),
        ("It ended.[3][4]Then it began.", "It ended. Then it began."),
        ('He said "no."[3]The talks ended.', 'He said "no." The talks ended.'),
        ("Was it?[^2]Nobody knew.", "Was it? Nobody knew."),
        ("It moved to the U.S.[5]Sales rose.", "It moved to the U.S. Sales rose."),
    ],
)
def test_it_keeps_a_space_between_sentences_where_a_marker_was(raw, want):
    assert strip_citations(raw) == want


@pytest.mark.parametrize(
    "text",
    ["It moved to the U.S. in 1990.", "A rise of 3.5 per cent.", "See e.g.Smith for details.", "It ended.It began."],
)
def test_it_does_not_split_text_without_a_marker(text):
    assert strip_citations(text) == text


def test_it_does_not_add_a_space_before_a_lower_case_word_or_a_number():
    assert strip_citations("It cost 3.[2]5 million, i.e.[3]about half.") == "It cost 3.5 million, i.e.about half."
