"""End to end in a real browser: an annotator labels a whole pair with the mouse and the keyboard.

Runs Debian's Chromium (/usr/bin/chromium) through Playwright against pytest-django's
live server. Every step waits until the page has no request in flight, so the live
server never runs two requests at once: with SQLite in memory it shares one database
connection with this thread.
"""

import io
import os
import random
import re
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import sync_playwright  # a dev dependency: missing, the module fails to import

from annotate.models import Assignment, Criterion, Label
from annotate.services.answers import overall_shown
from interchange import label_rows

# Playwright's sync API runs an event loop in this thread; the ORM calls made here are still synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TIMEOUT_MS = 10_000

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

# Counts htmx requests in flight; installed before any page script so that it survives reloads.
INFLIGHT_SCRIPT = """
window.__inflight = 0;
document.addEventListener("htmx:beforeRequest", () => { window.__inflight += 1; });
document.addEventListener("htmx:afterRequest", () => { window.__inflight -= 1; });
"""
# Selects the first `length` characters of the first paragraph of the article shown at `position`, as a mouse would.
SELECT_IN_ARTICLE = """([position, length]) => {
    const paragraph = document.querySelector(`article.prose[data-position="${position}"] p`);
    const node = Array.from(paragraph.childNodes).find(n => n.nodeType === Node.TEXT_NODE && n.textContent.length >= length);
    const range = document.createRange();
    range.setStart(node, 0);
    range.setEnd(node, length);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    document.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
}"""
IDLE_AND_SAVED = """id => window.__inflight === 0 &&
    document.getElementById(id).querySelector(".save-status").textContent.startsWith("Saved")"""


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


SETTLE_SECONDS = 0.3


def open_context(browser, live_server, **options):
    """A browser context on the live server that keeps count of the requests its pages send."""
    context = browser.new_context(base_url=live_server.url, **options)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(INFLIGHT_SCRIPT)
    pending = set()
    context.on("request", lambda request: pending.add(request))
    context.on("requestfinished", lambda request: pending.discard(request))
    context.on("requestfailed", lambda request: pending.discard(request))
    context.pending_requests = pending
    return context


def close_context(context) -> None:
    """Leave every page, then close the context once what the pages sent is answered.

    Leaving a page flushes its pending saves (a keep-alive request on `pagehide`); a save still on its way
    while the test's teardown empties the database deadlocks that on PostgreSQL, or lands in the next test.
    """
    pages = list(context.pages)
    for page in pages:
        page.goto("about:blank")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while context.pending_requests and pages and time.monotonic() < deadline:
        pages[0].wait_for_timeout(50)  # lets Playwright deliver the requests' events
    context.close()
    # A request the browser gave up on (leaving the page cancels it) may still be running in the live
    # server's thread; one CI run on PostgreSQL met such a request with the teardown's TRUNCATE (a
    # deadlock). Its server side takes milliseconds: give it time to end before the database is emptied.
    time.sleep(SETTLE_SECONDS)


@pytest.fixture
def page(browser, live_server):
    context = open_context(browser, live_server)
    page = context.new_page()
    yield page
    close_context(context)


@pytest.fixture
def live_demo(live_server):
    """The demo users, rubric, articles and campaign, loaded into the live server's database."""
    call_command("load_demo", stdout=io.StringIO())


def log_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/$"))


def start_next_pair(page) -> Assignment:
    page.get_by_role("button", name="Start the next pair").click()
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    return Assignment.objects.select_related("pair__article_a__system", "pair__article_b__system").get(pk=assignment_id(page))


def assignment_id(page) -> int:
    return int(re.search(r"/work/(\d+)/", page.url).group(1))


def wait_saved(page, form_id: str) -> None:
    page.wait_for_function(IDLE_AND_SAVED, arg=form_id)


def checked_position(form) -> str:
    return form.evaluate("f => (f.querySelector('input[name=position]:checked') || {}).value || ''")


def active_id(page) -> str:
    return page.evaluate("() => document.activeElement && (document.activeElement.closest('form.criterion') || {}).id || ''") or ""


def answer(page, key: str, previous: str | None, *, position: str, rationale: str, keyboard: bool) -> None:
    """Chooses and explains one criterion, then waits until both are saved."""
    form_id = f"c-{key}"
    form = page.locator(f"#{form_id}")
    textarea = form.locator("textarea[name=rationale]")
    if keyboard:
        # The page opens on the first unanswered criterion; from the previous one `n` moves here.
        if active_id(page) != form_id:
            if previous is not None and active_id(page) != f"c-{previous}":
                page.locator(f"#c-{previous}").focus()
            page.keyboard.press("n")
        assert active_id(page) == form_id
        # Choosing puts the cursor in the rationale.
        page.keyboard.press(position)
        assert page.evaluate("() => document.activeElement.name") == "rationale"
    else:
        form.locator(f"input[name=position][value='{position}']").click()
        textarea.click()
    # The rationale opens with 1, 2, j and k typed as keys: they must stay text, not move focus nor change the choice.
    page.keyboard.type(rationale[:5])
    page.keyboard.insert_text(rationale[5:])  # the rest at once: typing key by key costs seconds per pair
    assert textarea.input_value() == rationale
    assert checked_position(form) == position
    assert page.evaluate("() => document.activeElement.name") == "rationale"
    page.keyboard.press("Escape")
    assert active_id(page) == form_id
    wait_saved(page, form_id)


def assert_page_shows(page, answers: dict[str, tuple[str, str]]) -> None:
    for key, (position, rationale) in answers.items():
        form = page.locator(f"#c-{key}")
        assert checked_position(form) == position, key
        assert form.locator("textarea[name=rationale]").input_value() == rationale, key


def label_the_whole_pair(page, assignment: Assignment, *, seed: int) -> dict[str, tuple[str, str]]:
    keys = list(
        Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order").values_list("key", flat=True)
    )
    assert len(keys) == 39
    draw = random.Random(seed)
    answers: dict[str, tuple[str, str]] = {}
    previous = None
    for i, key in enumerate(keys):
        position = draw.choice("12")
        rationale = f"j1 k2 decides {key} ({i})"
        answer(page, key, previous, position=position, rationale=rationale, keyboard=draw.random() < 0.5)
        answers[key] = (position, rationale)
        previous = key
        if i == 19:
            page.reload()
            assert_page_shows(page, answers)
            assert page.locator("#progress").inner_text() == "20 / 39"
            assert page.locator("form.criterion.complete").count() == 20
            assert active_id(page) == f"c-{keys[20]}"  # a reload lands on the first unanswered criterion
    assert page.locator("#progress").inner_text() == "39 / 39"
    return answers


@pytest.mark.parametrize(
    ("username", "a_first", "seed"), [("annotator1", True, 1), ("annotator2", False, 2)], ids=["a-on-left", "b-on-left"]
)
def test_it_labels_a_whole_pair_with_mouse_and_keyboard_and_exports_the_right_systems(page, live_demo, username, a_first, seed):
    log_in(page, username, f"demo-{username}")
    assignment = start_next_pair(page)
    # The order is drawn at random on claim; fix it so that both orders are covered every run.
    Assignment.objects.filter(pk=assignment.pk).update(a_first=a_first, order="ab" if a_first else "ba")
    page.reload()

    answers = label_the_whole_pair(page, assignment, seed=seed)
    page.locator("#overall input[name=overall][value='2']").click()
    wait_saved(page, "overall")
    page.get_by_role("button", name="Submit and open the next pair").click()
    # The demo asks the guess question first (tests/test_browser_guess.py); the next pair comes after it.
    page.wait_for_url(re.compile(rf"/work/{assignment.pk}/guess/$"))
    assert "Submitted: " in page.locator(".messages").inner_text()

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.a_first is a_first
    assert overall_shown(assignment) == "2"
    pair = assignment.pair
    left, right = (pair.article_a, pair.article_b) if a_first else (pair.article_b, pair.article_a)
    system_of = {Label.Winner.A: pair.article_a.system.key, Label.Winner.B: pair.article_b.system.key}
    labels = {label.criterion.key: label for label in Label.objects.filter(assignment=assignment).select_related("criterion")}
    assert len(labels) == 39
    expected_system = {}
    for key, (position, rationale) in answers.items():
        expected_system[key] = (left if position == "1" else right).system.key
        assert system_of[labels[key].winner] == expected_system[key], key
        assert labels[key].rationale == rationale
    assert set(expected_system.values()) == {left.system.key, right.system.key}  # both sides won somewhere

    rows = [row for row in label_rows(pair.campaign) if row["rater"] == username]
    assert {row["criterion"]: row["winner_system"] for row in rows} == expected_system
    assert {(row["left_system"], row["right_system"]) for row in rows} == {(left.system.key, right.system.key)}


def test_it_retries_a_failed_save(page, live_demo):
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order").values_list("key", flat=True)[0]
    posts = []

    def fail_the_first_post(route):
        posts.append(route.request.method)
        if route.request.method == "POST" and len(posts) == 1:
            route.fulfill(status=500, body="Server Error")
        else:
            route.continue_()

    page.route(re.compile(r"/work/\d+/criteria/[^/]+/$"), fail_the_first_post)
    form = page.locator(f"#c-{key}")
    form.locator("input[name=position][value='1']").click()
    status = form.locator(".save-status")
    page.wait_for_function("() => window.__inflight === 0")
    # A 500 may come after the commit: the page cannot know, so it says "not confirmed" and sends it again.
    assert status.inner_text() == "Not confirmed (500); trying again in 1 s"
    assert not Label.objects.filter(assignment=assignment).exists()

    wait_saved(page, f"c-{key}")
    assert posts == ["POST", "POST"]
    label = Label.objects.get(assignment=assignment, criterion__key=key)
    assert label.winner == (Label.Winner.A if assignment.a_first else Label.Winner.B)


def test_it_stops_retrying_a_refused_save_and_keeps_the_text(page, live_demo):
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order").values_list("key", flat=True)[0]
    posts = []
    page.on(
        "request", lambda request: posts.append(request.url) if request.method == "POST" and f"/criteria/{key}/" in request.url else None
    )
    form = page.locator(f"#c-{key}")
    textarea = form.locator("textarea[name=rationale]")
    status = form.locator(".save-status")

    # A NUL cannot be typed on a keyboard; pasted text can hold one.
    textarea.evaluate("t => { t.value = 'Clearer \\u0000 prose.'; t.dispatchEvent(new Event('input', { bubbles: true })); }")
    page.wait_for_function(
        "() => window.__inflight === 0 && document.querySelector('#c-%s .save-status').textContent.startsWith('Not saved')" % key
    )
    assert status.inner_text().startswith("Not saved: The field 'rationale' contains a NUL character (U+0000)")
    assert "failed" in (status.get_attribute("class") or "")
    assert len(posts) == 1
    page.wait_for_timeout(2500)  # longer than the first retry's delay after a 5xx
    assert len(posts) == 1
    assert textarea.input_value() == "Clearer \x00 prose."
    assert not Label.objects.filter(assignment=assignment, criterion__key=key).exists()

    # Fixing the text saves it at once.
    textarea.evaluate("t => { t.value = 'Clearer prose.'; t.dispatchEvent(new Event('input', { bubbles: true })); }")
    wait_saved(page, f"c-{key}")
    assert len(posts) == 2
    assert Label.objects.get(assignment=assignment, criterion__key=key).rationale == "Clearer prose."
