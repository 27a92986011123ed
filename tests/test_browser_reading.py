"""A mixed rubric in a real browser (Debian's Chromium against the live server): one annotator does a
campaign's pair and its two single articles by keyboard alone, from the home page to the last submit.

Keys on the single-article page: y/n/a answer a yes/no question (a: N/A, where allowed), a digit
picks a point of a scale (0 is 10 on a scale up to 10), 1-9 one of a nominal criterion's first nine
classes, a count is digits then Enter; each goes on to the rationale, Esc leaves it, j moves to the
next criterion.
"""

import re
from urllib.parse import urlparse

import pytest
from django.contrib.auth.models import User

from annotate.models import Answer, Assignment, Label, ReadingAssignment
from tests.reading_campaigns import COUNT, NOMINAL, ONE_ARTICLE, PAIRWISE, RATED_TEN, mixed_campaign, rubric
from tests.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    active_id,
    browser,
    live_demo,
    log_in,
    page,
    wait_saved,
)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

REASON = "j1 k2 n y a 0 because"  # keys typed in a rationale stay text


def focused(page) -> str:
    return page.evaluate("() => document.activeElement.name || document.activeElement.tagName")


def opened(page, form_id: str) -> None:
    """The page opens on the first unanswered criterion (once its script has run)."""
    page.wait_for_function("id => document.activeElement && document.activeElement.id === id", arg=form_id)


def explain(page, form_id: str) -> None:
    """In the rationale the key put the cursor in: type it, leave with Esc, wait until it is saved."""
    assert focused(page) == "rationale" and active_id(page) == form_id
    page.keyboard.type(REASON)
    page.keyboard.press("Escape")
    assert focused(page) == "FORM" and active_id(page) == form_id
    wait_saved(page, form_id)


def do_reading(page) -> None:
    opened(page, "c-ck_summary")
    page.keyboard.press("a")
    explain(page, "c-ck_summary")
    page.keyboard.press("j")
    page.keyboard.press("4")
    explain(page, "c-rt_style")
    page.keyboard.press("j")
    for key in "12":
        page.keyboard.press(key)
    assert focused(page) == "value"
    page.keyboard.press("Enter")
    explain(page, "c-ct_typos")
    page.keyboard.press("j")
    page.keyboard.press("0")
    explain(page, "c-rt_ten")
    assert page.locator("#progress").inner_text() == "4 / 4"


def do_pair(page) -> None:
    opened(page, "c-pw_clear")
    page.keyboard.press("2")
    explain(page, "c-pw_clear")
    assert page.locator("#progress").inner_text() == "1 / 1"


def test_it_annotates_a_pair_and_single_articles_of_a_mixed_rubric_by_keyboard(page, live_demo):  # noqa: F811
    annotator = User.objects.get(username="annotator1")
    campaign = mixed_campaign(
        name="Mixed", criterion_set=rubric("mixed4", PAIRWISE, ONE_ARTICLE, COUNT, RATED_TEN), topics=1, annotators=[annotator]
    )
    assert (campaign.pairs.count(), campaign.readings.count()) == (1, 2)
    log_in(page, "annotator1", "demo-annotator1")
    kinds, previous = [], page.url
    page.locator("section.card", has_text="Mixed").get_by_role("button", name="Start the next pair").click()
    for _ in range(3):
        # Submitting opens the next item: wait for its address, not the one being left.
        page.wait_for_url(lambda url, left=previous: url != left and re.search(r"/work/\d+/$", url))
        # One address for every kind of item: the page's panel says which it draws.
        kind = "reading" if page.locator('#panel[data-keys="reading"]').count() else "pair"
        kinds.append(kind)
        do_reading(page) if kind == "reading" else do_pair(page)
        previous = page.url
        page.locator("#submit-form button[type=submit]").click()
    page.wait_for_url(lambda url: urlparse(url).path == "/")  # nothing left: home
    assert page.locator("section.card", has_text="Mixed").locator(".pairs-left").inner_text() == "0 pairs left for you."
    assert sorted(kinds) == ["pair", "reading", "reading"]
    readings = ReadingAssignment.objects.filter(annotator=annotator, pair__campaign=campaign)
    assert set(readings.values_list("status", flat=True)) == {"submitted"}
    for work in readings:
        answers = dict(Answer.objects.filter(assignment=work).values_list("criterion__key", "value"))
        assert answers == {"ck_summary": "na", "rt_style": "4", "ct_typos": "12", "rt_ten": "10"}
        assert set(Answer.objects.filter(assignment=work).values_list("rationale", flat=True)) == {REASON}
    pair = Assignment.objects.get(annotator=annotator, pair__campaign=campaign)
    label = Label.objects.get(assignment=pair)
    assert pair.status == "submitted" and label.winner == ("b" if pair.a_first else "a") and label.rationale == REASON


def test_it_answers_a_nominal_criterion_by_its_number_key(page, live_demo):  # noqa: F811
    annotator = User.objects.get(username="annotator1")
    campaign = mixed_campaign(name="Classes", criterion_set=rubric("classes", NOMINAL), topics=1, annotators=[annotator])
    log_in(page, "annotator1", "demo-annotator1")
    page.locator("section.card", has_text="Classes").get_by_role("button", name="Start the next article").click()
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    opened(page, "c-nm_stance")
    page.keyboard.press("9")  # no ninth class: nothing chosen, the cursor stays
    assert focused(page) == "FORM"
    page.keyboard.press("4")
    explain(page, "c-nm_stance")
    page.keyboard.press("j")
    page.keyboard.press("a")  # the checklist's N/A, a class here
    explain(page, "c-ck_dated")
    work = ReadingAssignment.objects.get(annotator=annotator, pair__campaign=campaign)
    answers = dict(Answer.objects.filter(assignment=work).values_list("criterion__key", "value"))
    assert answers == {"nm_stance": "Sans réponse", "ck_dated": "na"}


def test_it_types_a_free_text_answer_without_its_keys_being_taken(page, live_demo):  # noqa: F811
    from tests.test_text_answers import TEXT

    annotator = User.objects.get(username="annotator1")
    campaign = mixed_campaign(name="Notes", criterion_set=rubric("notes", TEXT), topics=1, annotators=[annotator])
    log_in(page, "annotator1", "demo-annotator1")
    page.locator("section.card", has_text="Notes").get_by_role("button", name="Start the next article").click()
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    opened(page, "c-tx_note")
    page.keyboard.press("4")  # a digit on the criterion is no answer of a text box
    assert page.locator("#c-tx_note textarea[name=value]").input_value() == ""
    page.locator("#c-tx_note textarea[name=value]").click()
    page.keyboard.type("Check 2019 survey; j k n y a 4")
    page.keyboard.press("Escape")
    wait_saved(page, "c-tx_note")
    work = ReadingAssignment.objects.get(annotator=annotator, pair__campaign=campaign)
    assert Answer.objects.get(assignment=work).value == "Check 2019 survey; j k n y a 4"
