"""“Cannot judge” on the pair page, in a real browser (issue 37): the key `c` where the campaign allows
it, a complete answer without a winner, saved in one request with its reason, and listed among the keys."""

import pytest

from annotate.models import Campaign, Label
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

WHY = "Neither article covers this part of the topic."


def test_it_answers_cannot_judge_by_keyboard_where_the_campaign_allows_it(page, live_demo):  # noqa: F811
    Campaign.objects.filter(name="Demo campaign").update(allow_cannot_judge=True)
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    first = assignment.pair.campaign.criterion_set.criteria.order_by("order").first()
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/criteria/" in r.url else None)
    assert active_id(page) == f"c-{first.key}"
    page.keyboard.press("c")
    page.keyboard.type(WHY)
    page.keyboard.press("Escape")
    wait_saved(page, f"c-{first.key}")
    label = Label.objects.get(assignment=assignment, criterion=first)
    assert (label.winner, label.cannot_judge, label.rationale) == ("", True, WHY)
    assert len(posts) == 1  # the choice and its reason in one request
    page.wait_for_function("id => document.getElementById(id).classList.contains('complete')", arg=f"c-{first.key}")
    page.reload()
    assert page.locator(f"#c-{first.key} input[value=cannot_judge]").is_checked()  # shown as given
    page.keyboard.press("?")
    assert "cannot judge" in page.locator("#keys-overlay").inner_text()


def test_it_offers_no_cannot_judge_where_the_campaign_does_not(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    first = assignment.pair.campaign.criterion_set.criteria.order_by("order").first()
    assert page.locator("input[value=cannot_judge]").count() == 0
    page.keyboard.press("c")  # does nothing here
    page.wait_for_timeout(300)
    assert not Label.objects.filter(assignment=assignment, criterion=first).exists()
