"""annotate.removal: what the cleaner removed, recomputed from raw and display markdown (no Django)."""

from annotate.cleaning import clean_article
from annotate.removal import PROSE_LOSS_LIMIT, article_removal, removed_segments

RAW = """# Stone_Bridge

The bridge crosses the river at its narrowest point [1]. It was built from local granite (https://example.org/granite) over six summers.

## History

Masons from the valley began work in 1821 [2][3], and the arch was closed two years later.

## References

[1] https://example.org/one
[2] https://example.org/two
"""


def removed_text(raw, removal):
    return [text for text, removed in removed_segments(raw, removal.spans) if removed]


def test_it_finds_inline_citations_and_urls_as_removed_spans():
    removal = article_removal(RAW, clean_article(RAW, "Stone Bridge"))
    gone = removed_text(RAW, removal)
    assert "[1]" in gone and "[2][3]" in gone
    assert any("example.org/granite" in text for text in gone)
    assert not any("granite" in text and "example" not in text for text in gone)


def test_it_counts_a_dropped_reference_section_but_no_prose_lost():
    removal = article_removal(RAW, clean_article(RAW, "Stone Bridge"))
    assert [s.heading for s in removal.removed_sections] == ["References"]
    assert removal.removed_prose_words == 0 and removal.prose_lost == 0.0
    assert removal.removed_words >= 1 and removal.flags == ()


def test_it_reports_nothing_removed_when_the_texts_agree():
    text = "# Quiet Pond\n\nA small pond with reeds.\n\n## Wildlife\n\nFrogs and herons.\n"
    removal = article_removal(text, text)
    assert removal.spans == () and removal.removed_words == 0 and removal.removed_sections == ()
    assert removal.prose_words == 8 and removal.words == 11  # "Quiet Pond" and "Wildlife" are headings


def test_it_flags_prose_lost_beyond_the_limit():
    raw = "# Pond\n\nFirst paragraph has exactly eight words in it.\n\nSecond paragraph also has eight words in it.\n"
    display = "# Pond\n\nFirst paragraph has exactly eight words in it.\n"
    removal = article_removal(raw, display)
    assert removal.removed_prose_words == 8 and removal.prose_words == 16
    assert removal.prose_lost == 0.5 > PROSE_LOSS_LIMIT
    assert removal.flags == ("lost 50.0% of its prose words",)


def test_it_flags_a_removed_section_that_held_a_paragraph():
    raw = (
        "# Pond\n\nThe pond is shallow and warm in summer months.\n\n"
        "## Notes\n\nThis note explains at length how the depth of the pond was measured by divers.\n\n"
        "## Sources\n\n- Survey of ponds, 1990\n- County records office\n"
    )
    display = "# Pond\n\nThe pond is shallow and warm in summer months.\n"
    removal = article_removal(raw, display)
    by_heading = {s.heading: s for s in removal.removed_sections}
    assert by_heading["Notes"].held_prose and by_heading["Notes"].prose_words == 15
    assert not by_heading["Sources"].held_prose and by_heading["Sources"].words == 7
    assert "removed section 'Notes' held 15 prose words" in removal.flags


def test_it_does_not_count_the_replaced_title_as_a_removed_section():
    raw = "# A research guide to ponds\n\nPonds are small.\n"
    removal = article_removal(raw, "# Pond\n\nPonds are small.\n")
    assert removal.removed_sections == ()
    assert removal.removed_words == 5  # the old title's words


def test_it_is_not_fooled_by_blank_lines_the_cleaner_adds_around_headings():
    raw = "# Pond\n\nIntro words here.\n## Life\nFrogs live here [1]. Herons visit [2].\n"
    display = "# Pond\n\nIntro words here.\n\n## Life\n\nFrogs live here. Herons visit.\n"
    removal = article_removal(raw, display)
    assert removed_text(raw, removal) == ["[1]", "[2]"]
    assert removal.removed_words == 0


def test_it_ignores_headings_and_markup_that_only_look_different():
    raw = "# Pond\n\nBody text.\n\nHistory:\n========\n\nOld text.\n\n**Ecology**\n\nGreen.\n"
    display = "# Pond\n\nBody text.\n\n## History\n\nOld text.\n\n**Ecology**\n\nGreen.\n"
    assert article_removal(raw, display).removed_sections == ()


def test_it_cuts_the_raw_text_into_pieces_that_join_back_to_it():
    removal = article_removal(RAW, clean_article(RAW, "Stone Bridge"))
    pieces = removed_segments(RAW, removal.spans)
    assert "".join(text for text, _ in pieces) == RAW
    assert all(text for text, _ in pieces)


def test_it_handles_empty_and_carriage_return_texts():
    assert article_removal("", "").words == 0
    removal = article_removal("# T\r\n\r\nWords here [1].\r\n", "# T\n\nWords here.\n")
    assert removed_text("# T\r\n\r\nWords here [1].\r\n", removal) == ["[1]"]
