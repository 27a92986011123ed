"""Adjudication end to end in a real browser (Debian's Chromium against the live server).

An adjudicator logs in, opens an item from the queue, reads both articles and the annotators'
rationales, chooses the final answer with a key (the cursor moves to the reason), types the
reason, records it and sees it recorded; the database holds it with source "adjudicated".
"""

import re

import pytest

from annotate.models import Adjudication, LabelChange
from annotate.rendering import plain_text
from annotate.selectors import shown_articles
from annotate.services.adjudication import adjudication_open
from tests.test_adjudication import dana, disputed  # noqa: F401 (fixtures)
from tests.test_browser import CHROMIUM, browser, log_in, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

REASON = "Article 2 gives the dates and their sources."


def opening_words(article) -> str:
    """The first words of an article's shown text, enough to tell the two apart."""
    return " ".join(plain_text(article.html).split()[:6])


def test_it_records_a_final_answer_chosen_with_the_keyboard(page, live_server, disputed, campaign, rachel):  # noqa: F811
    adjudication_open(campaign=campaign, by=rachel, criteria=[disputed["split"]])
    item = Adjudication.objects.get()
    log_in(page, "dana", "dana-password")

    page.goto(f"/campaigns/{campaign.pk}/adjudication/")
    # An adjudicator is given the next item (in an order drawn for them), not a list of every item by topic.
    page.get_by_role("link", name="Next open item").click()
    page.wait_for_url(re.compile(rf"/adjudicate/{item.pk}/$"))

    shown = shown_articles(disputed["pair"], item.a_first)
    for position in ("1", "2"):
        column = page.locator(f"#col-{position}")
        assert column.locator("h2.column-label").inner_text() == f"Article {position}"
        assert opening_words(shown[position]) in " ".join(column.locator("article").inner_text().split())
    answers = page.locator("#answers").inner_text()
    key = disputed["split"].key
    assert f"alice reasons on {key}" in answers and f"bob reasons on {key}" in answers
    assert "Annotator 1" in answers and "Annotator 2" in answers and "alice:" not in answers

    page.locator("body").press("2")
    assert page.evaluate("() => document.activeElement.id") == "reason"
    assert page.locator("input[name=position][value='2']").is_checked()
    page.keyboard.type(REASON)
    page.get_by_role("button", name="Record the final answer").click()

    # The only open item is decided: back to the queue, which says so.
    page.wait_for_url(re.compile(rf"/campaigns/{campaign.pk}/adjudication/$"))
    assert "Final answer recorded." in page.content()
    assert page.locator("#items tbody tr td").nth(3).inner_text() == "decided"
    page.goto(f"/adjudicate/{item.pk}/")
    assert page.locator("#decided").inner_text() == f"Final answer: Article 2. Reason: {REASON}"
    assert page.locator("#final-answer").count() == 0

    item.refresh_from_db()
    assert item.winner == ("b" if item.a_first else "a") and item.decided_by.username == "dana"
    changes = LabelChange.objects.filter(adjudication=item).values_list("field", "new_value", "source")
    assert sorted(changes) == [("rationale", REASON, "adjudicated"), ("winner", item.winner, "adjudicated")]
