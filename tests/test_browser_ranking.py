"""A campaign of rankings in a real browser (Debian's Chromium against the live server): one annotator
ranks a group of three articles by keyboard alone, from the home page to the submit.

On a group's page the articles are numbered 1 to 3 as shown; a ranking is typed as their numbers best
first, `2>1>3` (`=` between articles that share a place, where the criterion allows it): its first
digit goes to the criterion's box, Enter saves it and goes on to the rationale, Esc leaves it, j moves
to the next criterion.
"""

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate.models import Assignment, Campaign, ItemArticle, Label
from protocols import order as orders
from tests.test_browser import CHROMIUM, active_id, browser, live_demo, log_in, page, wait_saved  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

RUBRIC = Path(__file__).resolve().parent.parent / "fixtures" / "ranking_three.json"
REASON = "j k 2>1 because"  # keys typed in a rationale stay text
TYPED = {"rk_clear": "2>1>3", "rk_tight": "3=1>2", "rk_broad": "1>3>2"}


def focused(page) -> str:
    return page.evaluate("() => document.activeElement.name || document.activeElement.tagName")


def test_it_ranks_a_group_of_three_articles_by_keyboard(page, live_demo):  # noqa: F811
    call_command("import_criteria", str(RUBRIC), stdout=io.StringIO())
    call_command("create_campaign", "--name", "Ranked", "--criteria", "ranking_three", "--benchmark", "demo",
                 "--systems", "wikipedia,atlas_agent,quill_researcher", "--annotators", "annotator1", stdout=io.StringIO())  # fmt: skip
    campaign = Campaign.objects.get(name="Ranked")
    log_in(page, "annotator1", "demo-annotator1")
    card = page.locator("section.card", has_text="Ranked")
    assert "4 groups of articles left for you." in card.inner_text()
    card.get_by_role("button", name="Start the next group").click()
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    # Three articles side by side, numbered as shown; nothing names a system.
    assert page.locator("#articles .column-label").all_inner_texts() == ["Article 1", "Article 2", "Article 3"]
    body = page.locator("body").inner_text()
    assert not any(name in body for name in ("wikipedia", "atlas_agent", "quill_researcher", "Wikipedia"))
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'c-rk_clear'")
    for key in ("rk_clear", "rk_tight", "rk_broad"):
        form = f"c-{key}"
        assert active_id(page) == form
        page.keyboard.type(TYPED[key])
        assert focused(page) == "value"
        page.keyboard.press("Enter")
        assert focused(page) == "rationale" and active_id(page) == form
        page.keyboard.type(REASON)
        page.keyboard.press("Escape")
        wait_saved(page, form)
        if key != "rk_broad":
            page.keyboard.press("j")
    assert page.locator("#progress").inner_text() == "3 / 3"
    first = page.url
    page.locator("#submit-form button[type=submit]").click()
    page.wait_for_url(lambda url: url != first and re.search(r"/work/\d+/$", url))  # the next group opens

    work = Assignment.every.get(annotator__username="annotator1", pair__campaign=campaign, status="submitted")
    held = {
        orders.SLOTS[s.slot]: s.article.system.key for s in ItemArticle.objects.filter(item=work.pair).select_related("article__system")
    }
    stored = dict(Label.every.filter(assignment=work).values_list("criterion__key", "value"))
    for key, typed in TYPED.items():
        # Stored by slot: each number typed is the slot shown at that position.
        expected = "".join(work.order[int(c) - 1] if c.isdigit() else c for c in typed)
        assert stored[key] == expected, key
    assert {held[slot] for slot in stored["rk_clear"].split(">")} == {"wikipedia", "atlas_agent", "quill_researcher"}
    assert set(Label.every.filter(assignment=work).values_list("rationale", flat=True)) == {REASON}
    assert Assignment.every.filter(annotator__username="annotator1", pair__campaign=campaign, status="active").count() == 1
