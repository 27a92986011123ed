"""Re-render every stored article with the renderer of this release.

Articles keep the HTML they were rendered with at import. From this release a new
line of prose starts a new paragraph (``annotate.rendering``, ``paragraph_per_line``),
so articles imported before would still show the benchmark's line-per-paragraph
files as a few huge paragraphs. This migration renders their stored
``display_markdown`` again and updates ``html`` and ``toc`` where they changed.
The displayed text itself is unchanged character for character, so marked passages
(offsets into it) stay where they were. It calls the current renderer on purpose:
running it again after a later change of the renderer re-renders with that one.
"""

from django.db import migrations

BATCH = 200


def rerender(apps, schema_editor):
    from annotate.rendering import render_html, toc_from_html

    Article = apps.get_model("annotate", "Article")
    # Ids first, then one batch at a time: SQLite does not isolate a cursor from
    # writes to the table it reads.
    ids = list(Article.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), BATCH):
        changed = []
        for article in Article.objects.filter(pk__in=ids[start : start + BATCH]).only("pk", "display_markdown", "html", "toc"):
            html = render_html(article.display_markdown) if article.display_markdown else ""
            if html != article.html:
                article.html = html
                article.toc = [list(entry) for entry in toc_from_html(html)]
                changed.append(article)
        Article.objects.bulk_update(changed, ["html", "toc"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0006_campaign_neutral_emphasis_calibration_pairs"),
    ]

    # Going back leaves the new HTML: the old rendering cannot be told from the data.
    operations = [migrations.RunPython(rerender, migrations.RunPython.noop, elidable=True)]
