"""In a real browser: every kind of page carries the Content-Security-Policy and breaks none of it.

Chromium visits the login page, an annotator's pages (saving, marking a passage), a researcher's
(campaigns, members, topics, accounts, the blindness audit, the admin), the judges' pages, the
calibration dashboard with its charts and the planner, and the downloaded HTML report under its own
policy. Every `securitypolicyviolation` event and every console message about the policy is
collected: the list must stay empty. The charts, drawn with SVG attributes instead of CSS, must
look exactly as matplotlib's CSS drew them.
"""

import io
import re

import pytest
from django.core.management import call_command

from annotate.models import Campaign, Criterion, Topic
from annotate.services.answers import label_save, overall_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from calibration import charts
from tests.test_browser import CHROMIUM, browser, close_context, open_context  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

IDLE = "() => window.__inflight === 0"
# Installed before any page script: every violation of the policy, as the browser reports it.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", e => window.__violations.push(
  `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile || "?"}:${e.lineNumber} ${e.sample || ""}`));
"""
POLICY_WORDS = ("content security policy", "content-security-policy", "refused to")


class Watcher:
    """One browser tab that notes, page by page, whatever the policy blocked."""

    def __init__(self, page):
        self.page = page
        self.problems: list[str] = []
        self.path = ""
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"{self.path}: script error {error}"))

    def _console(self, message) -> None:
        if any(word in message.text.lower() for word in POLICY_WORDS):
            self.problems.append(f"{self.path}: console {message.type}: {message.text}")

    def settle(self) -> None:
        self.page.wait_for_load_state("load")
        self.page.wait_for_function(IDLE)
        self.page.wait_for_timeout(150)  # a violation event is queued, not synchronous
        self.problems += [f"{self.path}: {v}" for v in self.page.evaluate("() => window.__violations || []")]

    def visit(self, path: str, status: int = 200) -> str:
        self.path = path
        response = self.page.goto(path)
        assert response.status == status, (path, response.status)
        policy = response.headers.get("content-security-policy", "")
        assert "default-src 'self'" in policy and "script-src 'self' 'nonce-" in policy, (path, policy)
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        self.settle()
        return self.page.content()


@pytest.fixture
def watcher(browser, live_server):  # noqa: F811
    context = open_context(browser, live_server)
    context.add_init_script(WATCH)
    yield Watcher(context.new_page())
    close_context(context)


@pytest.fixture
def labelled_demo(live_server):
    """The demo with labels (annotator1 on all 8 pairs, annotator2 on 6) and a length baseline's verdicts: the dashboard draws every chart."""
    from judges.engine import judge_run_execute
    from judges.models import Judge
    from judges.services import judge_create, judge_run_create, judge_run_start

    call_command("load_demo", stdout=io.StringIO())
    campaign = Campaign.objects.get(name="Demo campaign")
    criteria = list(Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order"))
    from django.contrib.auth.models import User

    for n, (username, pairs) in enumerate((("annotator1", 8), ("annotator2", 6))):
        user = User.objects.get(username=username)
        for _ in range(pairs):
            work = assignment_claim_next(campaign=campaign, user=user)
            for i, criterion in enumerate(criteria):
                position = "1" if (i + work.pk + n) % 3 else "2"
                label_save(assignment=work, criterion=criterion, user=user, position=position, rationale="Reads more clearly here.")
            overall_save(assignment=work, user=user, value="1")
            assignment_submit(assignment=work, user=user)
    judge, _ = judge_create(name="longer", kind=Judge.Kind.LENGTH)
    judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge))
    coin, _ = judge_create(name="coin", kind=Judge.Kind.RANDOM)
    judge_run_start(campaign=campaign, judge=coin)  # queued, never run here: the page polls while it waits
    return campaign


def log_in(watcher: Watcher, username: str, password: str) -> None:
    watcher.visit("/accounts/login/")
    watcher.page.get_by_label("Username").fill(username)
    watcher.page.get_by_label("Password").fill(password)
    watcher.page.get_by_role("button", name="Log in").click()
    watcher.page.wait_for_url(re.compile(r"/(campaigns/)?$"))
    watcher.settle()


def test_it_breaks_no_rule_of_the_policy_on_any_kind_of_page(watcher, labelled_demo):
    campaign = labelled_demo
    page = watcher.page

    # Anonymous: the login page, a wrong password.
    watcher.visit("/accounts/login/")
    page.get_by_label("Username").fill("annotator1")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    watcher.settle()

    # An annotator: home, a pair (saves through htmx, a marked passage), a refused page.
    log_in(watcher, "annotator2", "demo-annotator2")
    assert "Demo campaign" in watcher.visit("/")
    page.get_by_role("button", name="Start the next pair").click()
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    watcher.path = page.url
    watcher.settle()
    first = page.locator("form.criterion").first
    first.locator("input[name=position][value='1']").click()
    first.locator("textarea[name=rationale]").fill("The first article reads better.")
    page.wait_for_function(
        "() => window.__inflight === 0 && document.querySelector('form.criterion .save-status').textContent.startsWith('Saved')"
    )
    page.locator("#col-1 article.prose p").first.click(click_count=3)
    page.get_by_role("button", name="▲ Good").click()
    page.locator("ul.evidence li.span-up").wait_for()  # a criterion is active: the mark is its evidence
    watcher.settle()
    watcher.visit(page.url)  # reloaded with a passage and a label
    watcher.visit("/campaigns/", status=403)
    page.get_by_role("button", name="Log out").click()
    watcher.settle()

    # A researcher: campaigns, members (loaded by htmx), topics, accounts, the audit, the admin.
    log_in(watcher, "researcher", "demo-researcher")
    topic = Topic.objects.filter(articles__isnull=False).first()
    for path in (
        "/campaigns/", f"/campaigns/{campaign.pk}/", f"/campaigns/{campaign.pk}/members/", "/campaigns/new/",
        f"/campaigns/{campaign.pk}/blindness/", "/topics/", f"/topics/{topic.pk}/", f"/topics/{topic.pk}/removed/atlas_agent/",
        "/admin/", "/admin/annotate/campaign/", f"/admin/annotate/campaign/{campaign.pk}/change/", "/admin/auth/user/",
        "/admin/judges/judgerun/", "/accounts/new/",
    ):  # fmt: skip
        watcher.visit(path)
    page.locator("textarea[name=entries]").fill("newcomer")
    page.get_by_role("button", name="Create accounts").click()
    page.get_by_text("newcomer").first.wait_for()
    watcher.settle()
    # The API in a browser: JSON, never DRF's browsable pages (their inline styles broke the policy).
    for path in ("/api/campaigns/", f"/api/campaigns/{campaign.pk}/"):
        response = page.goto(path)
        watcher.path = path
        assert response.status == 200 and response.headers["content-type"].startswith("application/json"), path
        watcher.settle()

    # Judges: the list, a campaign's runs (one queued: the table polls), the calibration dashboard and planner.
    watcher.visit("/judges/")
    watcher.visit(f"/judges/campaign/{campaign.pk}/")
    page.wait_for_timeout(2500)  # one poll of the runs table
    watcher.settle()
    dashboard = watcher.visit(f"/calibration/campaign/{campaign.pk}/")
    assert dashboard.count("<svg") >= 3
    page.locator("#planner").get_by_text("Each judge's PAR").first.wait_for()
    watcher.settle()
    watcher.visit(f"/calibration/campaign/{campaign.pk}/plan/")

    assert watcher.problems == []


def test_it_shows_the_downloaded_report_under_its_own_policy_without_a_violation(watcher, labelled_demo, live_server):
    log_in(watcher, "researcher", "demo-researcher")
    url = f"{live_server.url}/calibration/campaign/{labelled_demo.pk}/report.html"
    download = watcher.page.request.get(url)
    assert download.status == 200 and download.headers["content-disposition"].startswith("attachment")
    policy = download.headers["content-security-policy"]
    assert policy.startswith("default-src 'none'; style-src 'sha256-") and policy.endswith("sandbox")
    body = download.body()
    # Shown in the tab, as a browser would if the file were opened from the site.
    watcher.page.route(
        url,
        lambda route: route.fulfill(
            status=200, body=body, headers={"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy}
        ),
    )
    watcher.path = url
    watcher.page.goto(url)
    watcher.page.wait_for_load_state("load")
    watcher.page.wait_for_timeout(150)
    watcher.problems += watcher.page.evaluate("() => window.__violations || []")
    # Its stylesheet applied: the body is centred in 72rem.
    assert watcher.page.evaluate("() => getComputedStyle(document.body).maxWidth") != "none"
    assert watcher.problems == []


def test_it_draws_the_charts_with_attributes_exactly_as_matplotlib_drew_them_with_css(browser, labelled_demo, monkeypatch):  # noqa: F811
    """Each chart as matplotlib wrote it (CSS) and as the site serves it (attributes), side by side in Chromium: the same pixels."""
    from calibration.report.build import build_report

    report = build_report(labelled_demo, rounds=20)
    served = charts.report_charts(report)
    monkeypatch.setattr(charts, "presentation_attributes", lambda svg: svg)
    original = charts.report_charts(report)
    assert set(served) == set(original) and len(served) >= 3
    page = browser.new_page(viewport={"width": 900, "height": 700})
    try:
        for key in served:
            assert "style" not in served[key]
            shots = []
            for svg in (original[key], served[key]):
                page.set_content(f"<!doctype html><body style='margin:0'><div style='width:800px'>{svg}</div></body>")
                shots.append(page.locator("svg").first.screenshot())
            assert shots[0] == shots[1], key
    finally:
        page.close()
