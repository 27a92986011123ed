"""Evidence tied to a criterion, in a real browser (issue 37): a passage selected and marked by
keyboard while a criterion is active is that criterion's evidence, listed beside its rationale,
highlighted only while it is active, removable there, and exported and imported back exactly.
"""

import io

import pytest
from django.core.management import call_command

from annotate.models import Campaign, Span
from annotate.rendering import plain_text
from annotate.selectors import shown_articles
from tests.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    active_id,
    browser,
    live_demo,
    log_in,
    page,
    start_next_pair,
    wait_saved,
)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

REASON = "Clearer on this point, and better sourced."


def test_it_marks_evidence_by_keyboard_for_the_active_criterion_and_exports_and_imports_it_exactly(page, live_demo, tmp_path):  # noqa: F811
    Campaign.objects.filter(name="Demo campaign").update(evidence_required=Campaign.Evidence.EVERY)
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    criteria = list(assignment.pair.campaign.criterion_set.criteria.order_by("order"))
    first, second = criteria[0], criteria[1]
    form = page.locator(f"#c-{first.key}")
    assert active_id(page) == f"c-{first.key}"
    page.keyboard.press("1")
    page.keyboard.type(REASON)
    page.keyboard.press("Escape")
    wait_saved(page, f"c-{first.key}")
    # Chosen and explained, but the campaign asks for evidence: not done yet.
    assert "complete" not in (form.get_attribute("class") or "")

    page.keyboard.press("]")  # read Article 2; the criterion stays the active one
    page.keyboard.press("v")  # the first word on screen
    for _ in range(3):
        page.keyboard.press("Shift+ArrowRight")  # three words more
    page.keyboard.press("+")
    evidence = form.locator("ul.evidence li[data-span]")
    evidence.first.wait_for()
    assert evidence.count() == 1

    span = Span.objects.select_related("criterion").get(assignment=assignment)
    second_shown = shown_articles(assignment.pair, assignment.a_first)["2"]
    assert span.criterion == first
    assert span.article_id == second_shown.pk
    assert span.polarity == 1
    assert len(span.quote.split()) >= 3  # the first word on screen, grown by words (a line break counts as one)
    assert plain_text(second_shown.html)[span.start : span.end] == span.quote
    assert " ".join(span.quote.split()) in evidence.first.inner_text()
    # Its evidence done, the criterion is complete, and its chip says so.
    page.wait_for_function("id => document.getElementById(id).classList.contains('complete')", arg=f"c-{first.key}")
    assert "complete" in page.locator(f'.overview a[data-jump="c-{first.key}"]').get_attribute("class")

    # Highlighted in the text while its criterion is active, and only then.
    marks = page.locator("#a2-top mark.span-mark.evidence")
    assert marks.count() >= 1
    assert span.quote.startswith(marks.first.inner_text().strip()[:10])
    page.locator(f"#c-{second.key}").focus()
    assert marks.count() == 0
    form.focus()
    assert marks.count() >= 1

    # A second passage, marked bad, then the first removed from beside the rationale: gone from the
    # list, the text and the database.
    page.keyboard.press("]")
    page.keyboard.press("v")
    page.keyboard.press("Shift+ArrowDown")  # a sentence
    page.keyboard.press("-")
    page.wait_for_function("id => document.querySelectorAll('#' + id + ' li[data-span]').length === 2", arg=f"ev-{first.key}")
    assert Span.objects.filter(assignment=assignment, criterion=first, polarity=-1).count() == 1
    form.locator(f'ul.evidence li[data-span="{span.pk}"] button').click()
    page.wait_for_function("id => document.querySelectorAll('#' + id + ' li[data-span]').length === 1", arg=f"ev-{first.key}")
    assert list(Span.objects.filter(assignment=assignment).values_list("polarity", flat=True)) == [-1]
    page.wait_for_function("id => !document.querySelector('#a2-top mark[data-span=\"' + id + '\"]')", arg=str(span.pk))
    assert page.locator("#a2-top mark.span-mark.evidence").count() >= 1  # the other stays highlighted

    # Exported with its criterion, side and offsets, and imported back exactly.
    out = tmp_path / "labels.csv"
    call_command("export_labels", campaign="Demo campaign", out=str(out), stdout=io.StringIO())
    spans_file = (tmp_path / "labels.spans.csv").read_text(encoding="utf-8")
    assert f",{first.key}," in spans_file
    before = list(
        Span.objects.values_list("assignment_id", "article_id", "criterion_id", "start", "end", "quote", "polarity", "created_at")
    )
    Span.objects.all().delete()
    report = io.StringIO()
    call_command("import_labels", str(out), campaign="Demo campaign", stdout=report)
    after = list(Span.objects.values_list("assignment_id", "article_id", "criterion_id", "start", "end", "quote", "polarity", "created_at"))
    assert after == before
