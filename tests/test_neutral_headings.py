"""Neutral headings: sentence case, no visible numbering, levels renumbered from the top, on both sides alike."""

import pytest

from annotate.blindness import OPTIONS, Sample, blindness_report, launch_warning
from annotate.blindness_features import features_of
from annotate.models import Article
from annotate.rendering import headings_neutral, is_title_case, plain_text, render_html, toc_neutral
from annotate.selectors import article_columns

GENERATED = "# Marrow River\n\n### 2.2.1 Early Operations And Legacy\n\nText here.\n\n#### 3. The **Upper** Course Today\n\nMore text.\n"
REFERENCE = "# Marrow River\n\n## Early life in Paris\n\nText here.\n\n### History of the NATO treaty\n\nMore text.\n"


def test_it_shows_title_case_numbered_headings_in_sentence_case_without_numbers():
    html = headings_neutral(render_html(GENERATED))

    assert '<h2 id="sec-2"><span class="heading-number" hidden>2.2.1 </span>Early operations and legacy</h2>' in html
    assert '<h3 id="sec-3"><span class="heading-number" hidden>3. </span>The <strong>upper</strong> course today</h3>' in html
    assert '<h1 id="sec-1">Marrow River</h1>' in html  # the title stays as it is


def test_it_leaves_sentence_case_headings_and_their_proper_nouns_alone():
    html = headings_neutral(render_html(REFERENCE))

    assert '<h2 id="sec-2">Early life in Paris</h2>' in html
    assert "History of the NATO treaty</h3>" in html
    assert not is_title_case("Early life in Paris") and is_title_case("Early Operations And Legacy")


@pytest.mark.parametrize("markdown", [GENERATED, REFERENCE])
def test_it_keeps_the_text_length_so_every_passage_offset(markdown):
    html = render_html(markdown)
    shown = headings_neutral(html)
    assert len(plain_text(shown)) == len(plain_text(html))
    assert plain_text(shown).lower() == plain_text(html).lower()


def test_it_renumbers_the_table_of_contents_and_both_columns_alike():
    toc = [(3, "2.2.1 Early Operations And Legacy", "sec-2"), (4, "3. The Upper Course Today", "sec-3")]
    assert toc_neutral(toc) == [(2, "Early operations and legacy", "sec-2"), (3, "The upper course today", "sec-3")]
    shown = {
        "1": Article(html=render_html(GENERATED), toc=toc),
        "2": Article(html=render_html(REFERENCE), toc=[(2, "Early life in Paris", "sec-2"), (3, "History of the NATO treaty", "sec-3")]),
    }

    columns = article_columns(shown, neutral_emphasis=False, neutral_headings=True)

    assert [[level for level, _, _ in c["toc"]] for c in columns] == [[2, 3], [2, 3]]
    assert all("<h4" not in c["html"] for c in columns)
    plain = article_columns(shown, neutral_emphasis=False)
    assert "<h4" in plain[0]["html"]


def test_it_measures_the_articles_as_neutral_headings_show_them():
    written, neutral = features_of(GENERATED), features_of(GENERATED, neutral_headings=True)

    assert written["numbered_headings"] == 2 and written["title_case_headings"] == 1.0
    assert neutral["numbered_headings"] == 0 and neutral["title_case_headings"] == 0.0
    assert (written["heading_depth"], neutral["heading_depth"]) == (4.0, 3.0)
    assert neutral["words"] == written["words"]


def test_it_audits_guessability_under_each_presentation():
    samples = []
    for topic in range(12):
        samples.append(Sample(topic=str(topic), system="wikipedia", is_reference=True, markdown=REFERENCE + "Extra words. " * topic))
        samples.append(Sample(topic=str(topic), system="agent", is_reference=False, markdown=GENERATED + "Other words. " * (topic % 3)))

    report = blindness_report(samples, neutral_headings=True, per_system=False)

    assert set(report.guessability_by_options) == set(OPTIONS)
    assert report.guessability == report.guessability_by_options["neutral_headings"]
    assert report.as_dict()["guessability_by_options"]["both"]["text"]
    warning = launch_warning(report)
    if warning:
        for tell in ("Title Case headings", "Numbered headings", "Bullet-list share", "Words"):
            assert tell in warning


def test_it_is_a_design_field_of_the_plan_and_older_plans_do_not_deviate_for_it():
    from calibration.plan.check import deviations

    design = {"neutral_emphasis": True, "neutral_headings": True, "guess_question": True, "reference_name": "Wikipedia"}
    older = {"design": {"neutral_emphasis": True}}  # frozen before the fields existed
    assert deviations(older, {"design": design}) == []
    changed = deviations({"design": {**design, "neutral_headings": False}}, {"design": design})
    assert [(d["kind"], d["what"], d["planned"], d["now"]) for d in changed] == [("design_changed", "neutral headings", False, True)]
