"""The guess question in a real browser: after a submit, answered by keyboard, changed, then the next pair."""

import re

import pytest

from annotate.models import Assignment, Criterion
from annotate.services.answers import label_save, overall_save
from tests.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    browser,
    live_demo,
    log_in,
    page,
    start_next_pair,
)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")


@pytest.mark.parametrize("a_first", [True, False], ids=["a-first", "b-first"])
def test_it_answers_the_guess_question_by_keyboard_after_a_submit(page, live_demo, a_first):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    Assignment.objects.filter(pk=assignment.pk).update(a_first=a_first, order="ab" if a_first else "ba")
    assignment.refresh_from_db()
    for criterion in Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order"):
        label_save(assignment=assignment, criterion=criterion, user=assignment.annotator, position="1", rationale="Clearer lead.")
    overall_save(assignment=assignment, user=assignment.annotator, value="1")
    page.reload()

    page.locator("#submit-form button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/work/{assignment.pk}/guess/$"))
    assert page.get_by_text("Which article do you think is the Wikipedia article?").is_visible()

    page.keyboard.press("2")
    page.wait_for_function("() => document.querySelector('#guess button[value=second]').getAttribute('aria-pressed') === 'true'")
    assignment.refresh_from_db()
    assert assignment.guess == ("b" if a_first else "a")  # the article shown second, stored by side

    page.keyboard.press("0")
    page.wait_for_function("() => document.querySelector('#guess button[value=unknown]').getAttribute('aria-pressed') === 'true'")
    assignment.refresh_from_db()
    assert assignment.guess == Assignment.Guess.UNKNOWN
    assert assignment.labels.filter(winner="").count() == 0  # the labels are untouched

    page.keyboard.press("n")
    page.wait_for_url(lambda url: re.search(r"/work/\d+/$", url) and f"/work/{assignment.pk}/" not in url)
    page.goto(f"/work/{assignment.pk}/guess/")
    assert page.locator("#guess button[value=first]").is_disabled()  # locked by the next claim
