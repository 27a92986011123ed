"""Migration 0019 cleans and renders stored articles again with issue 33's cleaner."""

import importlib

import pytest
from django.apps import apps

from annotate.cleaning import clean_article
from annotate.models import Article
from annotate.rendering import render_html

pytestmark = pytest.mark.django_db

RAW = (
    "# T\n\nThe mill stood by the river.\n\n## References\n\n"
    'millnews.org – Valley Wire (A. Lind) - "Mill reopens" (Jun 2, 2023)\n'
    "Mill archive – Annual report (PDF)\n"
)
# What the cleaner before issue 33 showed of RAW: the source list written one entry per line.
OLD_DISPLAY = "# T\n\nThe mill stood by the river.\n\n## References\n\nMill archive – Annual report (PDF)\n"


def _reclean():
    importlib.import_module("annotate.migrations.0019_reclean_articles_source_blocks").reclean(apps, None)


def test_it_cleans_stored_articles_again_and_leaves_the_others_alone(catalogue):
    article = Article.objects.filter(system__is_reference=False).first()
    article.raw_markdown = RAW
    article.display_markdown = OLD_DISPLAY
    article.html = render_html(OLD_DISPLAY)
    article.toc = [[2, "References", "sec-2"]]
    article.save()
    others = list(Article.objects.exclude(pk=article.pk).order_by("pk").values_list("pk", "display_markdown", "html"))
    _reclean()
    article.refresh_from_db()
    assert article.display_markdown == clean_article(RAW, article.topic.title) and "References" not in article.display_markdown
    assert article.html == render_html(article.display_markdown) and article.toc == []
    # Articles whose display text this release leaves as it was are not written.
    assert list(Article.objects.exclude(pk=article.pk).order_by("pk").values_list("pk", "display_markdown", "html")) == others


def test_it_keeps_the_old_text_of_an_article_whose_marked_passages_would_move(campaign, alice):
    from annotate.models import Span
    from annotate.services.claims import assignment_claim_next
    from annotate.services.labelling import span_add
    from protocols.pairwise import FIRST, SIDE_A, side_of

    work = assignment_claim_next(campaign=campaign, user=alice)
    pair = work.pair
    article = pair.article_a if side_of(FIRST, work.a_first) == SIDE_A else pair.article_b
    # An opening note to the user, before the passage: removing it would move every offset.
    article.raw_markdown = "Here is the article you asked for:\n\n" + article.display_markdown
    article.display_markdown = article.raw_markdown
    article.html = render_html(article.display_markdown)
    article.save()
    from annotate.rendering import plain_text

    text = plain_text(article.html)
    start = text.index("Here is")
    span_add(assignment=work, position=FIRST, start=start, end=start + 7, quote="Here is", polarity=1)
    assert Span.objects.filter(article=article).exists()
    before = article.display_markdown
    _reclean()
    article.refresh_from_db()
    assert article.display_markdown == before
