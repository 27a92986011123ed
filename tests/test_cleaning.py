"""annotate.cleaning: citation stripping and article normalization (no Django)."""

import random
import time

import pytest

from annotate.cleaning import clean_article, count_words, normalize_article, strip_citations

# ------------------------------------------------------------------ inline citation markers


@pytest.mark.parametrize(
    "marker",
    ["[1]", "[12]", "[1, 2]", "[1,2]", "[1–3]", "[1-3]", "[1][2]", "[1] [2]", "[4], [5]", "[4]; [5]", "[2, p. 14]"],
)
def test_it_strips_bracketed_number_citations(marker):
    assert strip_citations(f"The river floods every spring {marker}.") == "The river floods every spring."


def test_it_strips_a_citation_between_words_leaving_one_space():
    assert strip_citations("The river [3] floods every spring.") == "The river floods every spring."


def test_it_strips_a_citation_glued_to_the_word_before():
    assert strip_citations("The river floods[3][4] every spring.") == "The river floods every spring."


def test_it_removes_the_comma_between_a_run_of_citations_but_keeps_the_sentence_comma():
    assert strip_citations("It grew in 2020 [4], [5], and then shrank.") == "It grew in 2020, and then shrank."


def test_it_strips_footnote_references():
    assert strip_citations("A bold claim.[^1] Another one[^note-2].") == "A bold claim. Another one."


def test_it_strips_footnote_definitions():
    text = "Body text.[^1]\n\n[^1]: The source, page 3.\n[^2]: Another source.\n\nMore body."
    assert strip_citations(text) == "Body text.\n\nMore body."


def test_it_strips_footnote_definitions_with_indented_continuations():
    text = "Body.[^a]\n\n[^a]: First line of the note\n    continues here\n\n    and in a second paragraph.\n\nAfter."
    assert strip_citations(text) == "Body.\n\nAfter."


def test_it_strips_lenticular_bracket_citations():
    assert strip_citations("Snow fell early【1】 and melted late【3†source】.") == "Snow fell early and melted late."


@pytest.mark.parametrize("sup", ["<sup>1</sup>", "<sup>[1]</sup>", "<sup>1,2</sup>", "<sup>[a]</sup>"])
def test_it_strips_superscript_citations(sup):
    assert strip_citations(f"The bridge opened in 1932{sup}.") == "The bridge opened in 1932."


def test_it_keeps_superscript_exponents_and_units():
    text = "An area of 12 km<sup>2</sup> and about 10<sup>6</sup> people."
    assert strip_citations(text) == text


def test_it_strips_numbered_links():
    text = "The club opened in 2008 [1](https://example.com/a), [2](https://example.org/b?x=1)."
    assert strip_citations(text) == "The club opened in 2008."


def test_it_strips_parenthesised_urls():
    text = "See the charter (https://example.com/charter.pdf) and the map (www.example.org/map)."
    assert strip_citations(text) == "See the charter and the map."


def test_it_strips_bare_urls():
    text = "The archive https://example.com/a/b?c=d#e holds it; so does www.example.org/records."
    assert strip_citations(text) == "The archive holds it; so does."


def test_it_strips_a_bare_url_inside_parentheses_with_other_words():
    assert strip_citations("It closed (see http://example.com/x).") == "It closed (see)."


@pytest.mark.parametrize("url", ["httpswww.example.com/page", "httpwww.example.com/page", "https:/example.com/page"])
def test_it_strips_urls_whose_scheme_lost_its_punctuation(url):
    assert strip_citations(f"Listed at {url} since 1999.") == "Listed at since 1999."


def test_it_keeps_the_text_of_markdown_links():
    text = "Built by [Manitowoc Shipbuilding](https://example.com/m) for the [Coast Guard](www.example.gov)."
    assert strip_citations(text) == "Built by Manitowoc Shipbuilding for the Coast Guard."


def test_it_keeps_the_text_of_links_whose_url_has_parentheses():
    text = "She is a [cow](https://en.example.org/wiki/Cow_(Mario)) in the game."
    assert strip_citations(text) == "She is a cow in the game."


def test_it_drops_a_link_whose_text_is_a_url():
    assert strip_citations("Website: [www.example.com](https://www.example.com) today.") == "Website: today."


def test_it_drops_images():
    text = "Intro ![a diagram of the hull](https://example.com/hull.png) text.\n\n![logo](logo.svg)\n\nNext."
    assert strip_citations(text) == "Intro text.\n\nNext."


def test_it_strips_autolinks():
    assert strip_citations("Official site: <https://example.com/home>, opened 2001.") == "Official site:, opened 2001."


def test_it_strips_reference_style_link_definitions_and_keeps_the_link_text():
    text = "Read the [annual report][rep] and the [charter].\n\n[rep]: https://example.com/r.pdf\n[charter]: http://example.com/c"
    assert strip_citations(text) == "Read the annual report and the charter."


@pytest.mark.parametrize("tag", ["[citation needed]", "[better source needed]", "[failed verification]", "[who?]"])
def test_it_strips_maintenance_tags(tag):
    assert strip_citations(f"The town was founded by settlers{tag}.") == "The town was founded by settlers."


def test_it_strips_a_garbled_wrapped_citation():
    text = "A deliberate nod [[1]), [26]]. It was sold [[1])]. Plates [[2].djvu/527), [4]]."
    assert strip_citations(text) == "A deliberate nod. It was sold. Plates."


def test_it_strips_a_reference_entry_line_anywhere():
    text = "Intro.\n\n[3] Annual report: https://example.com/r\n\nMore prose."
    assert strip_citations(text) == "Intro.\n\nMore prose."


# ------------------------------------------------------------------ what must be kept


@pytest.mark.parametrize(
    "text",
    [
        'He wrote that "the [sic] results were final."',
        '"It was [emphasis added] a disaster," she said.',
        '"He gave [the] orders to [a] captain [...] at dawn."',
        "- [ ] draft the plan\n- [x] review the plan",
        "The war began in 1939 and cost 3.5% of output; [1939] was a bad year.",
        "Scores were 1-2, 2–1 and [bracketed words] stay.",
    ],
)
def test_it_keeps_bracketed_prose_numbers_and_task_boxes(text):
    assert strip_citations(text) == text


def test_it_keeps_tables_with_numbers():
    table = "| Year | Wins | Losses |\n|:-----|-----:|:------:|\n| 2007 | 1 | 2 |\n| 2008 | 13 | 3 |"
    assert strip_citations(table) == table


def test_it_strips_citations_in_table_cells_without_touching_pipes():
    table = "| Year | Event |\n|---|---|\n| 1934 | Launched [2] |\n| 1945 | Sold [3][4] |"
    assert strip_citations(table) == "| Year | Event |\n|---|---|\n| 1934 | Launched |\n| 1945 | Sold |"


def test_it_drops_a_table_row_left_empty():
    table = "| A | B |\n|---|---|\n| x | y |\n| [1] | [2] |\n| z | w |"
    assert strip_citations(table) == "| A | B |\n|---|---|\n| x | y |\n| z | w |"


def test_it_leaves_code_spans_untouched():
    text = "Index with `items[1]` or fetch `https://example.com/api` [2]."
    assert strip_citations(text) == "Index with `items[1]` or fetch `https://example.com/api`."


def test_it_leaves_fenced_code_untouched():
    code = "```python\n# References\nurl = 'https://example.com'  # [1]\n\n\n\nx = a[1]\n```"
    text = f"Intro [1].\n\n{code}\n\nOutro."
    assert strip_citations(text) == f"Intro.\n\n{code}\n\nOutro."


def test_it_keeps_lists_and_drops_items_left_empty():
    text = "- First item [1]\n- [2]\n- Third item (https://example.com)\n  1. nested [3]\n  2. [4], [5]"
    assert strip_citations(text) == "- First item\n- Third item\n  1. nested"


def test_it_drops_a_sources_label_left_without_sources():
    text = "The bridge opened in 1932.\n\nSources: [1], [2]\n\nIt closed in 1990."
    assert strip_citations(text) == "The bridge opened in 1932.\n\nIt closed in 1990."


# ------------------------------------------------------------------ reference sections

BODY = "# Bridge\n\nThe bridge opened in 1932.\n\n## History\n\nIt was rebuilt in 1990."
REFS = "[1] https://example.com/a\n[2] Some Title: https://example.org/b"


@pytest.mark.parametrize(
    "heading",
    [
        "## References",
        "# References",
        "### References",
        "###### References",
        "## REFERENCES",
        "## References:",
        "## **References**",
        "## References:**",
        "## **References:**",
        "**References**",
        "**References:**",
        "References:",
        "References",
        "References\n----------",
        "## 8. References",
        "## Reference",
        "## Sources",
        "## Source list",
        "## Works cited",
        "## Cited works",
        "## Citations",
        "## Notes",
        "## Footnotes",
        "## External links",
        "## Further reading",
        "## Bibliography",
        "## Notes and references",
        "## Sources & further reading",
    ],
)
def test_it_drops_a_trailing_references_section(heading):
    assert strip_citations(f"{BODY}\n\n{heading}\n\n{REFS}\n") == BODY


def test_it_drops_a_trailing_run_of_reference_sections():
    text = f"{BODY}\n\n## Notes\n\nAll statements are sourced below.\n\n## References\n\n{REFS}"
    assert strip_citations(text) == BODY


def test_it_drops_sub_sections_of_a_references_section():
    text = f"{BODY}\n\n## Sources\n\n### Books\n\n- Lund, P. *A Book of Bridges*. Oslo: Fjord Press, 1990.\n\n### Web\n\n- {REFS}"
    assert strip_citations(text) == BODY


def test_it_drops_a_notes_section_in_the_middle_only():
    text = "## Early life\n\nBorn in 1903.\n\n## Notes\n\n- Hall, R. (1961). *Dates*. p. 4.\n\n## Career\n\nA professor from 1952."
    assert strip_citations(text) == "## Early life\n\nBorn in 1903.\n\n## Career\n\nA professor from 1952."


def test_it_drops_a_deeper_sources_section_up_to_the_next_section():
    text = "## History\n\nBuilt in 1932.\n\n### Sources\n\n- County Archives – Map of the river crossing (1931)\n\n## Legacy\n\nStill standing."
    assert strip_citations(text) == "## History\n\nBuilt in 1932.\n\n## Legacy\n\nStill standing."


def test_it_keeps_a_bibliography_of_works_without_urls():
    text = "## Life\n\nA writer.\n\n## Bibliography\n\n- *First Book* (2014)\n- *Second Book* (2020)"
    assert strip_citations(f"{text}\n\n## References\n\n{REFS}") == text


@pytest.mark.parametrize("heading", ["## Selected bibliography", "## Notes on research coverage and sources", "## Historical sources"])
def test_it_keeps_sections_whose_name_merely_mentions_sources(heading):
    text = f"{BODY}\n\n{heading}\n\nSome prose about it."
    assert strip_citations(text) == text


def test_it_keeps_prose_after_a_bold_references_line_that_ends_its_list():
    prose = " ".join(["This long paragraph is article prose and not a reference entry at all."] * 4)
    text = f"Intro.\n\n**References**\n\n1. Dahl, K. (1990). *A Book*. Bergen University Press.\n\n{prose}"
    assert strip_citations(text) == f"Intro.\n\n{prose}"


@pytest.mark.parametrize(
    "block",
    [
        "[1] https://example.com/a\n[2] https://example.org/b",
        "[1] Annual report: https://example.com/a\n\n[2] Map of the town: https://example.org/b",
        "1. https://example.com/a\n2. https://example.org/b",
        "- [8] https://example.com/a\n- [9] https://example.org/b",
        "1. <https://example.com/a>\n2. <https://example.org/b>",
        "Sources:\n[1] https://example.com/a",
    ],
)
def test_it_drops_a_trailing_block_of_reference_entries_without_heading(block):
    assert strip_citations(f"{BODY}\n\n{block}\n") == BODY


def test_it_keeps_a_final_numbered_list_without_urls():
    text = f"{BODY}\n\n1. First step.\n2. Second step."
    assert strip_citations(text) == text


# ------------------------------------------------------------------ metadata and tidying


def test_it_strips_fetch_metadata_lines():
    text = (
        "Title: Bridge - Wikipedia\n\nURL Source: https://example.com/Bridge\n\nPublished Time: 2024-01-01T00:00:00Z\n\n"
        "Markdown Content:\n# Bridge\n\nThe bridge opened in 1932."
    )
    assert strip_citations(text) == "# Bridge\n\nThe bridge opened in 1932."


def test_it_keeps_a_title_label_inside_the_article():
    text = "The album.\n\nTitle: the opening track"
    assert strip_citations(text) == text


def test_it_removes_the_space_before_punctuation():
    assert strip_citations("It rained today . Then , it stopped !") == "It rained today. Then, it stopped!"


def test_it_leaves_no_double_space_where_a_marker_was():
    out = strip_citations("One [1] two [2] three (https://example.com) four.\n\n[3] Five six.\n\nSeven.")
    assert out == "One two three four.\n\nFive six.\n\nSeven."


def test_it_collapses_runs_of_blank_lines():
    assert strip_citations("One.\n\n\n\n\nTwo.\n\n[1]\n\n\nThree.") == "One.\n\nTwo.\n\nThree."


def test_it_never_joins_or_splits_paragraphs():
    text = "First paragraph [1].\nSame paragraph, next line [2].\n\nSecond paragraph [3]."
    assert strip_citations(text) == "First paragraph.\nSame paragraph, next line.\n\nSecond paragraph."


def test_it_keeps_prose_untouched_when_there_is_nothing_to_strip():
    text = "# Title\n\nA plain paragraph, with commas; and colons: fine.\n\n> A quote.\n\n- a\n- b"
    assert strip_citations(text) == text


# ------------------------------------------------------------------ normalize_article


def test_it_replaces_an_underscored_title_heading():
    assert normalize_article("# Arne_Furumark\n\nText.", "Arne Furumark") == "# Arne Furumark\n\nText.\n"


def test_it_accepts_an_underscored_title():
    assert normalize_article("Text.", "Arne_Furumark") == "# Arne Furumark\n\nText.\n"


def test_it_replaces_a_first_h1_whatever_its_spelling():
    assert normalize_article("# Something Else\n\nText.", "Bridge") == "# Bridge\n\nText.\n"


def test_it_inserts_a_title_when_the_article_starts_with_prose():
    assert normalize_article("Text.\n\n## History\n\nMore.", "Bridge") == "# Bridge\n\nText.\n\n## History\n\nMore.\n"


def test_it_inserts_a_title_when_the_first_heading_is_a_section():
    assert normalize_article("## Early life\n\nText.", "Bridge") == "# Bridge\n\n## Early life\n\nText.\n"


def test_it_treats_a_first_section_heading_spelling_the_title_as_the_title():
    assert normalize_article("## Bridge\n\nText.", "Bridge") == "# Bridge\n\nText.\n"


def test_it_shifts_h1_sections_to_h2_keeping_relative_depth():
    text = "# Bridge\n\nIntro.\n\n# Early Life\n\nText.\n\n## Childhood\n\nMore.\n\n# Legacy\n\nEnd."
    want = "# Bridge\n\nIntro.\n\n## Early Life\n\nText.\n\n### Childhood\n\nMore.\n\n## Legacy\n\nEnd.\n"
    assert normalize_article(text, "Bridge") == want


def test_it_shifts_deep_sections_up_to_h2():
    text = "# Bridge\n\n### History\n\nText.\n\n#### Rebuild\n\nMore."
    assert normalize_article(text, "Bridge") == "# Bridge\n\n## History\n\nText.\n\n### Rebuild\n\nMore.\n"


def test_it_caps_heading_depth_at_h6():
    text = "# T\n\n# A\n\n###### B\n\nText."
    assert normalize_article(text, "T") == "# T\n\n## A\n\n###### B\n\nText.\n"


def test_it_converts_setext_headings():
    text = "Bridge\n======\n\nIntro.\n\nHistory\n-------\n\nText."
    assert normalize_article(text, "Bridge") == "# Bridge\n\nIntro.\n\n## History\n\nText.\n"


def test_it_strips_bold_and_trailing_colons_from_headings():
    text = "# T\n\n## **History**\n\nA.\n\n## Career:\n\nB.\n\n### **Later years:**\n\nC.\n\n## __Legacy__ ##\n\nD."
    want = "# T\n\n## History\n\nA.\n\n## Career\n\nB.\n\n### Later years\n\nC.\n\n## Legacy\n\nD.\n"
    assert normalize_article(text, "T") == want


def test_it_keeps_italics_on_a_heading_naming_a_work():
    assert normalize_article("# T\n\n### *Hot, Wet and Shaking*\n\nA.", "T") == "# T\n\n## *Hot, Wet and Shaking*\n\nA.\n"


def test_it_normalizes_line_endings_and_trailing_spaces():
    text = "# T  \r\n\r\nLine one.   \r\nLine two.\t\r\n\r\n\r\n\r\nEnd.\n\n\n"
    assert normalize_article(text, "T") == "# T\n\nLine one.\nLine two.\n\nEnd.\n"


def test_it_separates_headings_from_paragraphs_with_a_blank_line():
    assert normalize_article("# T\nIntro.\n## A\nText.", "T") == "# T\n\nIntro.\n\n## A\n\nText.\n"


def test_it_does_not_take_hashtags_or_code_comments_for_headings():
    text = "# T\n\n#hashtag stays.\n\n```bash\n# a comment\n```"
    assert normalize_article(text, "T") == "# T\n\n#hashtag stays.\n\n```bash\n# a comment\n```\n"


def test_it_keeps_a_thematic_break_after_a_blank_line():
    text = "# T\n\nText.\n\n---\n\nMore."
    assert normalize_article(text, "T") == "# T\n\nText.\n\n---\n\nMore.\n"


def test_it_gives_both_articles_of_a_pair_the_same_skeleton():
    wiki = "# Arne_Furumark\n\nIntro.\n\n## Biography\n\nText."
    agent = "Title: x\n\n# Arne Furumark\n\nIntro [1].\n\n# Biography:\n\nText [2].\n\n## References\n\n[1] https://a.example\n"
    assert clean_article(wiki, "Arne Furumark") == clean_article(agent, "Arne Furumark")


# ------------------------------------------------------------------ idempotence, words, speed

MESSY = (
    "Title: Bridge\n\nURL Source: https://example.com/b\n\nMarkdown Content:\n"
    "Bridge\n======\n\nThe **bridge** opened in 1932 [1], [2] . It spans 3.5 km<sup>2</sup>【4†source】.\n\n"
    "# Early_Life:\n\n- Built by [Acme](https://acme.example) [3]\n- [4]\n\n"
    "| Year | Event |\n|---|---|\n| 1932 | Opened [5] |\n\n"
    "## **Details**\n\nSee `code[1]` and ![img](x.png) www.example.com/x.\n\n"
    "## Notes\n\n[^1]: A note.\n\n## Sources\n\n1. https://example.com/1\n"
)


def test_it_is_idempotent():
    once = clean_article(MESSY, "Bridge")
    assert clean_article(once, "Bridge") == once
    assert strip_citations(strip_citations(MESSY)) == strip_citations(MESSY)


def test_it_cleans_a_messy_article_as_expected():
    want = (
        "# Bridge\n\nThe **bridge** opened in 1932. It spans 3.5 km<sup>2</sup>.\n\n"
        "## Early_Life\n\n- Built by Acme\n\n| Year | Event |\n|---|---|\n| 1932 | Opened |\n\n"
        "### Details\n\nSee `code[1]` and.\n"
    )
    assert clean_article(MESSY, "Bridge") == want


def test_it_counts_words_of_prose():
    assert count_words("# Title\n\nThe **well-known** bridge — built in 1932 — cost 3.5% more.") == 10
    assert count_words("| a | b |\n|---|---|\n| - | > |") == 2
    assert count_words("") == 0
    assert count_words("`code` and *emphasis* _here_") == 4


def _words_token_by_token(text: str) -> int:
    # The rule as count_words states it, one token at a time.
    return sum(1 for token in text.split() if any(c.isalnum() for c in token))


def test_it_counts_words_by_the_token_rule_in_any_script_and_white_space():
    cases = [
        "élan — naïve “quoted” café",  # non-ASCII letters in and beside ASCII ones; a lone dash
        "Москва 東京 ١٢٣ x²",  # Cyrillic, CJK, Arabic-Indic digits, a superscript digit
        "a\u00a0b c\u2009d\u3000e \u00a0 \u2014\u00a0\u2014",  # non-ASCII spaces split tokens
        "a\x1cb\x1fc\x85d\x0be\x0cf",  # str.split's other white space
        "_ __ *_* a_b \U0001f600 \U0001f600x",  # underscores and emoji are not letters
        "\ud800 x\udcff y",  # lone surrogates (text decoded with surrogateescape)
    ]
    for text in cases:
        assert count_words(text) == _words_token_by_token(text), text
    alphabet = list("ab9_ -|*#.,\t\n\x1c\x85\xa0\u2009\u3000é—“”²١東\U0001f600") + ["\udcff"]
    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert count_words(text) == _words_token_by_token(text), repr(text)


def test_it_counts_the_same_words_before_and_after_cleaning_a_clean_article():
    text = "# T\n\nPlain prose, with [sic] and 1939.\n\n## Part\n\n- one\n- two"
    assert count_words(clean_article(text, "T")) == count_words(text)


# These bounds guard against quadratic or exponential regex behaviour (which would
# take minutes), not against slowness: bench/clean_only.py measures speed. They are
# ten times the worst time seen here, so a loaded CI machine does not fail them.
BLOW_UP_SECONDS = 10.0


def _timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def test_it_cleans_a_5_mb_article_without_blowing_up():
    # About one citation or URL per 100 bytes: denser than any agent in the sample.
    block = (
        "## Operations [1]\n\n"
        "The cutter patrolled the coast from 1934 onwards [2], [3], and in the spring of 1942 it rescued the "
        "crews of several tankers torpedoed off the Outer Banks (https://example.com/a/b?c=1) [4][5]. Its crew "
        "of 44 was later raised to 75 【6†source】, and the [Coast Guard](https://example.gov/cg) kept it in "
        "service until 1963 [7]. See www.example.org/history for the logs [^8].\n\n"
        "| Year | Event | Crew |\n|:-----|:------|-----:|\n| 1934 | Commissioned [9] | 44 |\n"
        "| 1942 | Rescues [10], [11] | 75 |\n\n"
        "- Built at Manitowoc [12]\n- Sold in 1968 <sup>13</sup>\n- [14]\n\n"
        "A second paragraph of plain prose follows, with no citation at all, describing the hull, the engines, "
        "the armament and the crew quarters in the kind of detail an encyclopedia article would give.\n\n"
    )
    text = "# Big\n\n" + block * (5_000_000 // len(block)) + "## References\n\n[1] https://example.com\n"
    assert len(text) >= 4_990_000
    assert _timed(clean_article, text, "Big") < BLOW_UP_SECONDS


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000,
        "]" * 100_000,
        "`" * 100_000,
        "*" * 100_000,
        "[" * 50_000 + "](" * 50_000,
        "![" * 50_000,
        "[1" * 50_000,
        "(https://" * 20_000,
        "http" * 50_000,
        " " * 100_000 + ".",
        "#" * 100_000,
        "<sup>" * 20_000,
        "\x01" * 100_000,
    ],
)
def test_it_survives_a_pathological_line(line):
    assert _timed(clean_article, f"Intro.\n\n{line}\n\nOutro.", "T") < BLOW_UP_SECONDS


def test_it_finds_a_mark_in_a_rare_place_as_the_eight_searches_did():
    # inline._rare_mark gates the rarer tidying of a line with marks; it must answer
    # as the searches it replaced ("\x01*", ", \x01", "(\x01", ...).
    from annotate.cleaning.inline import _rare_mark

    rng = random.Random(11)
    needles = ("\x01*", "\x01_", ",\x01", ", \x01", ";\x01", "; \x01", "(\x01", "[\x01")
    for _ in range(20000):
        line = "".join(rng.choice("\x01\x01*_,; ([a") for _ in range(rng.randint(0, 9)))
        assert _rare_mark(line) == any(n in line for n in needles), repr(line)
