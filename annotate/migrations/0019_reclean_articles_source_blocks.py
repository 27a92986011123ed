"""Clean and render every stored article again with the cleaner of this release (issue 33).

From this release every block under a heading that announces sources is judged on
its own (citation entry, agent's note or content), and agents' notes at an article's
start or end go; articles imported before would still show what the old rules left
(a source list written one entry per line, the agent's closing message) or lack what
they removed (a credits table). This migration cleans each stored ``raw_markdown``
again and, where the display text changed, stores the new ``display_markdown``,
``html``, ``toc`` and ``word_count``. Articles whose display text is unchanged (all
those without a source heading or an agent's note) are not touched.

An article with marked passages (spans: offsets into its displayed text) is updated
only if every passage still reads the same at the same offsets; otherwise it keeps
its old text, and the migration says how many it kept. Like 0007, it calls the
current cleaner and renderer on purpose.
"""

from django.db import migrations

BATCH = 200


def reclean(apps, schema_editor):
    from annotate.cleaning import clean_article, count_words
    from annotate.rendering import plain_text, render_html, toc_from_html

    Article = apps.get_model("annotate", "Article")
    Span = apps.get_model("annotate", "Span")
    ids = list(Article.objects.order_by("pk").values_list("pk", flat=True))
    kept = 0
    for start in range(0, len(ids), BATCH):
        changed = []
        batch = Article.objects.filter(pk__in=ids[start : start + BATCH]).select_related("topic", "system")
        for article in batch.only("pk", "raw_markdown", "display_markdown", "topic__title", "system__is_reference"):
            display = clean_article(article.raw_markdown, article.topic.title, is_reference=article.system.is_reference)
            if display == article.display_markdown:
                continue
            html = render_html(display)
            spans = list(Span.objects.filter(article_id=article.pk).values_list("start", "end", "quote"))
            if spans:
                text = plain_text(html)
                if any(text[s:e] != quote for s, e, quote in spans):
                    kept += 1
                    continue
            article.display_markdown = display
            article.html = html
            article.toc = [list(entry) for entry in toc_from_html(html)]
            article.word_count = count_words(display)
            changed.append(article)
        Article.objects.bulk_update(changed, ["display_markdown", "html", "toc", "word_count"])
    if kept:
        print(f"\n  0019: kept the old text of {kept} article(s) whose marked passages would move")


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0018_campaign_topic_back_to_back"),
    ]

    # Going back leaves the new text: the old cleaning cannot be told from the data.
    operations = [migrations.RunPython(reclean, migrations.RunPython.noop, elidable=True)]
