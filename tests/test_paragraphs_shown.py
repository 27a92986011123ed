"""Paragraphs as written: a new line of prose in an article starts a new paragraph on the page."""

import re

import pytest
from django.urls import reverse

from annotate.models import Article
from annotate.rendering import emphasis_plain, plain_text, prose_paragraphs, render_html
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from tests.helpers import run, write_wlc

# Written as the benchmark's reference files are: one paragraph a line, no blank line between.
REFERENCE = (
    "# Salt Marsh\n"
    "A salt marsh is a coastal wetland flooded by the tide twice a day.\n"
    "Its grasses trap silt, and the marsh rises with the sea.\n"
    "Birds feed on the mud flats at low water.\n"
    "## Plants\n"
    "Cordgrass grows at the seaward edge.\n"
    "Glasswort and sea lavender grow higher up.\n"
    "- cordgrass\n"
    "- glasswort\n"
    "\n"
    "| plant | zone |\n"
    "|---|---|\n"
    "| cordgrass | low |\n"
)
GENERATED = "# Salt Marsh\n\nSalt marshes line sheltered coasts.\n\n## Ecology\n\nThey store carbon in their soil and shelter young fish.\n"


def _columns(html: str) -> list[str]:
    return re.findall(r'<article class="prose"[^>]*data-position="[12]">(.*?)</article>', html, re.S)


@pytest.mark.django_db
def test_it_shows_each_line_of_a_single_newline_file_as_a_paragraph(tmp_path, client, alice, rachel):
    repo = write_wlc(
        tmp_path,
        topics={"Salt_Marsh": REFERENCE},
        systems={"agent_a": {"Salt_Marsh": GENERATED}},
    )
    result = run("import_wlc", str(repo), "--quiet-progress")
    assert result.code == 0, result.err
    reference = Article.objects.get(system__key="wikipedia")
    # What is stored as the displayed text keeps the author's lines as they were.
    assert "day.\nIts grasses" in reference.display_markdown
    campaign = campaign_create(name="Marsh", criterion_set=campaign_criteria(), systems=["wikipedia", "agent_a"], annotators=[alice])
    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    response = client.get(reverse("assignment", args=[work.pk]))
    assert response.status_code == 200
    columns = _columns(response.content.decode())
    assert len(columns) == 2
    shown_first = work.pair.article_a if work.a_first else work.pair.article_b
    by_system = dict(zip([shown_first.system.key, ({"wikipedia", "agent_a"} - {shown_first.system.key}).pop()], columns))
    # Five lines of prose make five paragraphs; the list and the table are not paragraphs.
    assert by_system["wikipedia"].count("<p>") == 5
    assert "<p>Its grasses trap silt, and the marsh rises with the sea.</p>" in by_system["wikipedia"]
    assert by_system["wikipedia"].count("<li>") == 2 and by_system["wikipedia"].count("<table>") == 1
    assert by_system["agent_a"].count("<p>") == 2


def campaign_criteria():
    from annotate.models import CriterionSet

    return CriterionSet.objects.get()


def test_it_starts_a_paragraph_at_each_new_line_of_prose():
    html = render_html("# T\n\nOne line.\nTwo line.\n\nThree line.\n")
    assert prose_paragraphs(html) == ["One line.", "Two line.", "Three line."]
    # Off (campaign instructions): CommonMark joins the lines.
    joined = render_html("# T\n\nOne line.\nTwo line.\n", paragraph_per_line=False)
    assert prose_paragraphs(joined) == ["One line.\nTwo line."]


def test_it_leaves_lists_tables_headings_code_and_hard_breaks_as_they_were():
    markdown = (
        "# T\n\n"
        "- item one\n  still item one\n- item two\n\n"
        "1. first\n\n   loose first\n   its second line\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "## Heading\n\n"
        "```\ncode line 1\ncode line 2\n```\n\n"
        "Ends with a hard break\\\nafter it.\n"
    )
    assert render_html(markdown) == render_html(markdown, paragraph_per_line=False)


def test_it_splits_the_lines_of_a_block_quote():
    html = render_html("> First quoted line.\n> Second quoted line.\n")
    assert "<blockquote>\n<p>First quoted line.</p>\n<p>Second quoted line.</p>\n</blockquote>" in html


def test_it_never_cuts_bold_italics_or_a_code_span_that_runs_across_a_line():
    html = render_html("Plain start **bold\nacross** end.\nAn *italic\none* here.\nNext `code\nspan` line.\nLast line.\n")
    assert prose_paragraphs(html) == [
        "Plain start bold\nacross end.",
        "An italic\none here.",
        "Next code span line.",
        "Last line.",
    ]
    assert html.count("<strong>") == html.count("</strong>") == 1


def test_it_keeps_the_text_character_for_character():
    markdown = "# T\n\nA <b>kept</b> tag.\nA line with <script> in it.\n> quote\n> more\n\n- list\nlazy\n"
    # The browser's text (what span offsets count in) is the same whichever way lines are read.
    assert plain_text(render_html(markdown)) == plain_text(render_html(markdown, paragraph_per_line=False))


def test_it_keeps_the_text_of_every_sample_article_character_for_character(sample_path):
    from annotate.cleaning import clean_article

    files = sorted((sample_path / "data").glob("*/wiki_data/cleaned_data/article/*.md"))
    files += sorted((sample_path / "data").glob("*/test_data/*/md_data/*.md"))
    assert files
    split = 0
    for path in files:
        display = clean_article(path.read_text(encoding="utf-8"), path.stem.replace("_", " "))
        shown, joined = render_html(display), render_html(display, paragraph_per_line=False)
        assert plain_text(shown) == plain_text(joined), path
        split += shown.count("<p>") > joined.count("<p>")
    # Every reference file of the sample writes its paragraphs on single lines.
    assert split >= 20


def test_it_shows_bold_and_italics_as_plain_text_with_neutral_emphasis():
    html = render_html("The **Salt Marsh** is *wet*, <b>muddy</b> and <i>green</i>.\n")
    plain = emphasis_plain(html)
    assert plain == "<p>The Salt Marsh is wet, muddy and green.</p>\n"
    assert plain_text(plain) == plain_text(html)


@pytest.mark.django_db
def test_it_re_renders_articles_stored_before_the_change(catalogue):
    """Migration 0007 renders stored articles again, so a deployment's old HTML shows the paragraphs too."""
    import importlib

    from django.apps import apps

    rerender = importlib.import_module("annotate.migrations.0007_rerender_articles_paragraph_per_line").rerender
    article = Article.objects.filter(system__key="wikipedia").first()
    article.display_markdown = "# T\n\nOne line.\nTwo line.\n\n## Part\n\nThree.\n"
    article.html = render_html(article.display_markdown, paragraph_per_line=False)
    article.toc = []
    article.save()
    untouched = Article.objects.exclude(pk=article.pk).values_list("pk", "html").order_by("pk")
    before = list(untouched)
    rerender(apps, None)
    article.refresh_from_db()
    assert article.html.count("<p>") == 3 and "<p>Two line.</p>" in article.html
    assert article.toc == [[2, "Part", "sec-2"]]
    # Articles already rendered with this release's rule are left as they are.
    assert list(untouched) == before
