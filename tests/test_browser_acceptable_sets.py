"""Every acceptable verdict on the pair page, in a real browser (issue 40 item 5): Shift+1 / Shift+2 /
Shift+T mark or unmark a verdict also acceptable, saved with the choice and its reason in one request."""

import pytest

from annotate.models import Campaign, Label
from protocols.pairwise import side_of
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

REASON = "Article 1 is clearer; a tie would be fair too."


def test_it_marks_every_acceptable_verdict_by_keyboard(page, live_demo):  # noqa: F811
    Campaign.objects.filter(name="Demo campaign").update(accept_sets=True, allow_tie=True)
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    first = assignment.pair.campaign.criterion_set.criteria.order_by("order").first()
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/criteria/" in r.url else None)
    assert active_id(page) == f"c-{first.key}"
    page.keyboard.press("Shift+2")  # also acceptable: Article 2 ...
    page.keyboard.press("Shift+T")  # ... and a tie
    page.keyboard.press("Shift+2")  # Article 2 after all not
    page.keyboard.press("1")  # the choice; the cursor goes to the rationale
    page.keyboard.type(REASON)
    page.keyboard.press("Escape")
    wait_saved(page, f"c-{first.key}")
    label = Label.objects.get(assignment=assignment, criterion=first)
    assert label.winner == side_of("1", assignment.a_first)
    assert label.acceptable == ["tie"]
    assert len(posts) == 1  # the set, the choice and the reason in one request
    page.reload()
    boxes = page.locator(f"#c-{first.key} input[name=acceptable]")
    assert [boxes.nth(i).is_checked() for i in range(boxes.count())] == [False, False, True]
    page.keyboard.press("?")
    assert "also acceptable" in page.locator("#keys-overlay").inner_text()
