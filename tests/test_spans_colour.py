"""Marked passages wear their polarity: "▼ bad" in the bad colour, "▲ good" in the good one.

Polarity is stored as 1 / -1; both are truthy, so the list once called every mark "up".
"""

import re

import pytest
from django.urls import reverse

from annotate.rendering import plain_text
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import span_add
from tests.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    SELECT_IN_ARTICLE,
    browser,
    live_demo,
    log_in,
    page,
    start_next_pair,
)

pytestmark = pytest.mark.django_db

ITEM = re.compile(r'<li class="(span-[a-z]+)"[^>]*>\s*<span class="polarity">(.)</span>')


@pytest.fixture
def work(campaign, alice):
    return assignment_claim_next(campaign=campaign, user=alice)


def mark(assignment, position: str, start: int, polarity: int):
    pair = assignment.pair
    article = pair.article_a if (position == "1") == assignment.a_first else pair.article_b
    quote = plain_text(article.html)[start : start + 10]
    return span_add(assignment=assignment, position=position, start=start, end=start + 10, quote=quote, polarity=polarity)


def test_it_gives_each_mark_the_class_of_its_own_polarity(client, alice, work):
    mark(work, "1", 0, -1)
    mark(work, "2", 5, 1)
    client.force_login(alice)

    response = client.get(reverse("assignment", args=[work.pk]))

    assert response.status_code == 200
    assert ITEM.findall(response.content.decode()) == [("span-down", "▼"), ("span-up", "▲")]


def test_it_gives_the_class_in_the_fragment_htmx_swaps_in(client, alice, work):
    client.force_login(alice)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    quote = plain_text(left.html)[0:12]

    response = client.post(
        reverse("span-add", args=[work.pk]),
        {"position": "1", "start": "0", "end": "12", "quote": quote, "polarity": "-1"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    assert ITEM.findall(response.content.decode()) == [("span-down", "▼")]


# --- in a real browser: the colour the annotator sees -------------------------------------

GOOD, BAD = "rgb(31, 122, 58)", "rgb(179, 38, 30)"  # --ok and --bad in static/app.css


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_it_colours_a_bad_mark_bad_and_a_good_mark_good_in_the_browser(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    start_next_pair(page)

    for position, button, kind in (("1", "▼ Bad", "span-down"), ("2", "▲ Good", "span-up")):
        page.evaluate(SELECT_IN_ARTICLE, [position, 8])
        page.get_by_role("button", name=button).click()
        # A criterion is active as the page opens: the marks are its evidence, listed beside its rationale.
        page.locator(f"ul.evidence li.{kind}").wait_for()

    colours = page.eval_on_selector_all("ul.evidence li .polarity", "els => els.map(e => [e.textContent, getComputedStyle(e).color])")
    assert colours == [["▼", BAD], ["▲", GOOD]]
