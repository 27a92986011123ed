"""A reference heading removes citation lists only: tables and prose under it are content (no Django)."""

import pytest

from annotate.cleaning import clean_article, strip_citations
from annotate.removal import article_removal

CREDITS = (
    "# Night Opera\n\n"
    "## 8. Reception\n\n"
    "Critics praised the staging.\n\n"
    "## 9. References and Data Sources\n\n"
    "1. Berg, A. (2001). Opera now. https://example.org/berg\n"
    "2. https://example.org/programme\n\n"
    "The production toured four cities in Europe over two seasons with one cast.\n\n"
    "| Role | Name | Country |\n"
    "|---|---|---|\n"
    "| Conductor | Anna Berg | Sweden |\n"
    "| Director | Li Wei | China |\n"
)


@pytest.mark.parametrize("is_reference", [False, True])
def test_it_keeps_a_content_table_and_prose_under_a_references_heading(is_reference):
    shown = clean_article(CREDITS, "Night Opera", is_reference=is_reference)
    assert "## 9. References and Data Sources" in shown
    assert "| Conductor | Anna Berg | Sweden |" in shown and "| Director | Li Wei | China |" in shown
    assert "The production toured four cities" in shown
    # The citation list goes.
    assert "Opera now" not in shown and "example.org" not in shown


def test_it_still_drops_a_section_that_holds_only_a_citation_list():
    text = "Body text.\n\n## References\n\n1. Berg, A. (2001). Opera now. https://example.org/berg\n- Wei, L. Stages. 2019.\n"
    assert strip_citations(text) == "Body text."


def test_it_drops_a_table_of_sources_under_a_references_heading():
    text = "Body text.\n\n## References\n\n| Source | Publisher | Accessed |\n|---|---|---|\n| Opera now | Berg Press | 2024 |\n"
    assert strip_citations(text) == "Body text."


@pytest.mark.parametrize(
    "line",
    [
        "All factual statements are supported by the sources listed below and were checked.",
        "Berg, Anna. Opera in the North: a history of touring companies. Stockholm, 2001.",
        "This article was written from the company's own records and the press of the time.",
        "Short label line:",
    ],
)
def test_it_drops_prose_that_is_about_the_sources_or_is_itself_a_citation(line):
    text = f"Body text.\n\n## References\n\n{line}\n\n- Berg, A. (2001). Opera now.\n"
    assert strip_citations(text) == "Body text."


def test_it_keeps_a_sub_heading_only_above_kept_content():
    text = (
        "Body text.\n\n## References\n\n### Books\n\n- Berg, A. (2001). Opera now.\n\n"
        "### Cast\n\n| Role | Name |\n|---|---|\n| Lead | Ida Holm |\n"
    )
    shown = strip_citations(text)
    assert "## References" in shown and "### Cast" in shown and "| Lead | Ida Holm |" in shown
    assert "### Books" not in shown and "Opera now" not in shown


def test_it_reads_lines_after_a_list_item_as_part_of_the_citation_list():
    # A lazy continuation line belongs to the entry above it, however long it is.
    text = (
        "Body text.\n\n## References\n\n"
        "- Berg, A. (2001). Opera now.\n"
        "Reprinted with a new preface and an index of the touring company's performers.\n"
    )
    assert strip_citations(text) == "Body text."


def test_it_drops_talk_about_the_sourcing_and_keeps_the_content_beside_it():
    text = (
        "## History\n\nThe mill was built in 1820.\n\n## Sources\n\n"
        "This report draws on the county archive and on interviews consulted in 2024 for the purpose.\n\n"
        "The mill's ledgers, kept from 1820 to 1901, survive in good order in the county town.\n\n"
        "- Holm, I. (1999). Mills of the county.\n"
    )
    shown = strip_citations(text, is_reference=False)
    assert "This report" not in shown and "Mills of the county" not in shown
    assert shown.endswith("## Sources\n\nThe mill's ledgers, kept from 1820 to 1901, survive in good order in the county town.")


def test_it_reports_what_it_kept_under_a_reference_heading():
    shown = clean_article(CREDITS, "Night Opera")
    removal = article_removal(CREDITS, shown)
    assert removal.removed_sections == ()
    (kept,) = removal.kept_reference_sections
    assert kept.heading == "9. References and Data Sources"
    # Berg, A, Opera, now: the citation list's words; the prose line and the table stay.
    # Kept: the heading (4 words), the prose line (13) and the table (11).
    assert kept.removed_words == 4 and kept.kept_words == 4 + 13 + 11
    assert any("kept 28 words under the reference heading '9. References and Data Sources'" in f for f in removal.flags)


def test_it_reports_nothing_kept_for_a_reference_section_removed_whole():
    raw = "# T\n\nBody text.\n\n## References\n\n1. Berg, A. (2001). Opera now.\n"
    removal = article_removal(raw, clean_article(raw, "T"))
    assert removal.kept_reference_sections == ()
    assert [s.heading for s in removal.removed_sections] == ["References"]
