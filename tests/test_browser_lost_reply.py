"""A save that committed on the server but whose reply never reached the browser (issue 22, item 8).

The request reaches the real server, which stores the change; the reply is then cut. The page cannot
tell that from a save that never arrived, so it must not say "Not saved": it sends the same answer
again, the server finds it stored, and the page says "Saved", with one change in the audit trail.
"""

import re

import pytest

from annotate.models import Criterion, Label, LabelChange
from annotate.services.answers import overall_shown
from tests.test_browser import CHROMIUM, browser, live_demo, log_in, page, start_next_pair, wait_saved  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

# Every text a save status shows, in order, whatever replaces the element.
WATCH_STATUSES = """id => {
    window.__statuses = [];
    const form = document.getElementById(id);
    new MutationObserver(() => {
        const text = form.querySelector(".save-status").textContent.trim();
        if (text && window.__statuses[window.__statuses.length - 1] !== text) window.__statuses.push(text);
    }).observe(form, { subtree: true, childList: true, characterData: true });
}"""


def lose_the_first_reply(page, url_pattern: str) -> list[str]:
    """Lets every request reach the server; the first one's reply is then dropped, as when a
    connection is cut after the commit."""
    attempts: list[str] = []

    def handle(route):
        attempts.append(route.request.method)
        if len(attempts) == 1:
            route.fetch()  # the server answers, so the change is stored...
            route.abort("connectionreset")  # ...and the browser never hears it
        else:
            route.continue_()

    page.route(re.compile(url_pattern), handle)
    return attempts


def test_it_reports_saved_when_a_criterion_save_was_stored_but_its_reply_lost(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order").values_list("key", flat=True)[0]
    attempts = lose_the_first_reply(page, r"/work/\d+/criteria/[^/]+/$")
    page.evaluate(WATCH_STATUSES, f"c-{key}")

    page.locator(f"#c-{key} input[name=position][value='1']").click()
    page.wait_for_function("() => window.__inflight === 0")
    assert Label.objects.filter(assignment=assignment, criterion__key=key).exists()  # stored, though the page never heard it

    wait_saved(page, f"c-{key}")
    statuses = page.evaluate("() => window.__statuses")
    assert attempts == ["POST", "POST"]
    assert statuses[-1].startswith("Saved ")
    assert not [s for s in statuses if s.startswith("Not saved")], statuses
    assert LabelChange.objects.filter(assignment=assignment, criterion__key=key).count() == 1  # the retry changed nothing


def test_it_reports_saved_when_the_overall_answer_was_stored_but_its_reply_lost(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    attempts = lose_the_first_reply(page, r"/work/\d+/overall/$")
    page.evaluate(WATCH_STATUSES, "overall")

    page.locator("#overall input[name=overall][value='2']").click()
    page.wait_for_function("() => window.__inflight === 0")
    assignment.refresh_from_db()
    assert overall_shown(assignment) == "2"

    wait_saved(page, "overall")
    statuses = page.evaluate("() => window.__statuses")
    assert attempts == ["POST", "POST"]
    assert statuses[-1].startswith("Saved ")
    assert not [s for s in statuses if s.startswith("Not saved")], statuses
    assert LabelChange.objects.filter(assignment=assignment, field="overall").count() == 1
