"""The annotator's flow in a real browser (Debian's Chromium against the live server).

Keys: a choice key puts the cursor in the rationale, `Esc` then `n` goes to the next unanswered
criterion, a reload lands on the first one. A criterion is done only when complete. A refused
submission names what is missing by text, as links. A change typed just before the page is left
still reaches the server. Times show in the browser's zone; the rationale box grows; marked
passages are highlighted in the article and removed there; the home page shows the pairs left;
narrow screens work.
"""

import html
import re
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User

from annotate.answers import shorten
from annotate.models import Assignment, Campaign, Criterion, Label, Span
from annotate.rendering import headings_neutral, plain_text
from annotate.services.answers import label_save, overall_save
from annotate.services.labelling import assignment_submit, span_add
from tests.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    SELECT_IN_ARTICLE,
    active_id,
    browser,
    checked_position,
    close_context,
    live_demo,
    log_in,
    open_context,
    page,
    start_next_pair,
    wait_saved,
)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

IDLE = "() => window.__inflight === 0"
REASON = "Clearer on this point, and better sourced."


@pytest.fixture
def new_page(browser, live_server):  # noqa: F811
    """Pages in contexts of their own (a time zone, a screen size), closed after the test."""
    contexts = []

    def make(**options):
        context = open_context(browser, live_server, **options)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        close_context(context)


def criteria_of(assignment: Assignment) -> list[Criterion]:
    return list(Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order"))


def focused_name(page) -> str:
    return page.evaluate("() => document.activeElement.name || document.activeElement.tagName")


def answer_by_service(assignment: Assignment, criterion: Criterion, *, position: str = "1", rationale: str = REASON) -> None:
    label_save(assignment=assignment, criterion=criterion, user=assignment.annotator, position=position, rationale=rationale)


def visible_in_panel(page, form_id: str) -> bool:
    return page.evaluate(
        """id => { const f = document.getElementById(id).getBoundingClientRect(), p = document.getElementById("panel").getBoundingClientRect();
                   return f.top >= p.top && f.bottom <= p.bottom; }""",
        form_id,
    )


def stored_rationale(assignment: Assignment, key: str) -> str:
    label = Label.objects.filter(assignment=assignment, criterion__key=key).first()
    return label.rationale if label else ""


def wait_for_rationale(page, assignment: Assignment, key: str, text: str) -> str:
    """Polls the database (the flush is a beacon nobody waits for) for up to 5 s."""
    for _ in range(50):
        if stored_rationale(assignment, key) == text:
            break
        page.wait_for_timeout(100)
    return stored_rationale(assignment, key)


# --- keys ---------------------------------------------------------------------------------


def test_it_puts_the_cursor_in_the_rationale_when_a_key_chooses(page, live_demo):  # noqa: F811
    Campaign.objects.filter(name="Demo campaign").update(allow_tie=True)
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    criteria = criteria_of(assignment)
    for criterion, key, value in zip(criteria, ("1", "2", "t"), ("1", "2", "tie")):
        form_id = f"c-{criterion.key}"
        assert active_id(page) == form_id
        page.keyboard.press(key)
        assert focused_name(page) == "rationale" and active_id(page) == form_id
        assert checked_position(page.locator(f"#{form_id}")) == value
        page.keyboard.insert_text(REASON)
        page.keyboard.press("Escape")
        assert focused_name(page) == "FORM"
        wait_saved(page, form_id)
        page.keyboard.press("n")
    winners = dict(Label.objects.filter(assignment=assignment).values_list("criterion__key", "winner"))
    first, second = ("a", "b") if assignment.a_first else ("b", "a")
    assert winners == {criteria[0].key: first, criteria[1].key: second, criteria[2].key: "tie"}


def test_it_goes_to_the_next_unanswered_criterion_with_esc_then_n(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    criteria = criteria_of(assignment)
    answer_by_service(assignment, criteria[1])
    answer_by_service(assignment, criteria[2])
    answer_by_service(assignment, criteria[3], rationale="")  # a winner, but no rationale yet: not done
    page.reload()

    assert active_id(page) == f"c-{criteria[0].key}"
    page.keyboard.press("2")
    page.keyboard.insert_text(REASON)
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    # Past the two complete criteria, into the rationale of the one that lacks it.
    assert active_id(page) == f"c-{criteria[3].key}" and focused_name(page) == "rationale"
    assert visible_in_panel(page, f"c-{criteria[3].key}")
    page.keyboard.insert_text(REASON)
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    assert active_id(page) == f"c-{criteria[4].key}" and focused_name(page) == "FORM"
    page.wait_for_function(IDLE)

    # Once every criterion and the overall question are answered, `n` says how to submit but never
    # focuses Submit: prose typed outside a text box (an `n`, then a space) must not submit the pair.
    for criterion in criteria[4:]:
        answer_by_service(assignment, criterion)
    overall_save(assignment=assignment, user=assignment.annotator, value="1")
    page.reload()
    page.locator(f"#c-{criteria[10].key}").focus()
    page.keyboard.press("n")
    assert page.locator("#submit-note").is_visible()
    assert page.evaluate("() => document.activeElement.textContent.trim()") != "Submit and open the next pair"
    page.keyboard.type("now a sentence typed outside any box ")
    page.locator("#submit-form button[type=submit]").focus()
    page.keyboard.press(" ")  # even a focused Submit ignores Space
    page.wait_for_timeout(300)
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.ACTIVE
    page.keyboard.press("Control+Enter")  # its own key
    page.wait_for_url(lambda url: not url.endswith(f"/work/{assignment.pk}/"))  # the guess question or the next item
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED


def test_it_lands_on_the_first_unanswered_criterion_after_a_reload(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    criteria = criteria_of(assignment)
    for criterion in criteria[:25]:
        answer_by_service(assignment, criterion)
    answer_by_service(assignment, criteria[25], rationale="short")  # under the 10 characters the campaign asks
    page.reload()
    assert active_id(page) == f"c-{criteria[25].key}"
    assert focused_name(page) == "rationale"  # its winner is chosen: the cursor waits where the work is
    assert visible_in_panel(page, f"c-{criteria[25].key}")
    page.keyboard.insert_text(" but fair")
    page.keyboard.press("Escape")
    wait_saved(page, f"c-{criteria[25].key}")
    page.reload()
    assert active_id(page) == f"c-{criteria[26].key}" and focused_name(page) == "FORM"


# --- done means complete --------------------------------------------------------------------


def test_it_counts_a_criterion_done_only_when_its_rationale_is_there(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[0].key
    form = page.locator(f"#c-{key}")
    textarea = form.locator("textarea[name=rationale]")

    def shows(progress: str, state: str) -> None:
        page.wait_for_function(IDLE)
        wait_saved(page, f"c-{key}")
        assert page.locator("#progress").inner_text() == progress
        classes = (form.get_attribute("class") or "").split()
        assert ("complete" in classes, "partial" in classes) == (state == "complete", state == "partial"), classes

    form.locator("input[name=position][value='1']").click()
    shows("0 / 39", "partial")  # a winner alone is not done: amber, not green, and not counted
    textarea.fill("too short")  # 9 characters, the campaign asks for 10
    shows("0 / 39", "partial")
    textarea.fill("long enough")
    shows("1 / 39", "complete")
    textarea.fill("   ")
    shows("0 / 39", "partial")
    page.reload()
    assert page.locator("#progress").inner_text() == "0 / 39"
    assert "partial" in (form.get_attribute("class") or "").split()
    assert page.locator("form.criterion.complete").count() == 0


def test_it_names_what_is_missing_by_criterion_text_as_links_next_to_it(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    criteria = criteria_of(assignment)
    for criterion in criteria:
        if criterion not in (criteria[5], criteria[30]):
            answer_by_service(assignment, criterion)
    answer_by_service(assignment, criteria[30], rationale="meh")
    overall_save(assignment=assignment, user=assignment.annotator, value="2")
    page.reload()
    page.get_by_role("button", name="Submit and open the next pair").click()
    page.locator("#errors").wait_for()

    errors = page.locator("#errors")
    assert "Not submitted yet. 2 questions still need an answer:" in errors.inner_text()
    links = errors.locator("a")
    assert [links.nth(i).inner_text() for i in range(links.count())] == [f"“{shorten(c.text)}”" for c in (criteria[5], criteria[30])]
    assert all(len(shorten(c.text)) <= 70 for c in criteria)
    assert not re.search(r"\b(ww|bc|n)_[a-z]*_?\d", errors.inner_text())  # no criterion ids
    assert errors.locator("li").nth(1).inner_text().endswith(": write a rationale of at least 10 characters (3 so far)")
    # Each problem is also written next to its criterion.
    assert page.locator(f"#c-{criteria[5].key} .criterion-problem").inner_text() == (
        "Missing: choose a winner; write a rationale of at least 10 characters (0 so far)."
    )
    assert page.locator("form.criterion .criterion-problem").count() == 2

    links.nth(1).click()
    assert active_id(page) == f"c-{criteria[30].key}" and focused_name(page) == "rationale"
    assert visible_in_panel(page, f"c-{criteria[30].key}")
    links.nth(0).click()
    assert active_id(page) == f"c-{criteria[5].key}"
    assert visible_in_panel(page, f"c-{criteria[5].key}")


def test_it_shows_the_servers_own_reason_when_a_save_is_refused_with_403(page, live_demo):  # noqa: F811
    from annotate.services.campaigns import campaign_annotator_remove

    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[0].key
    campaign_annotator_remove(campaign=assignment.pair.campaign, user=assignment.annotator, by=User.objects.get(username="researcher"))
    refusal = page.request.get(f"/work/{assignment.pk}/")
    assert refusal.status == 403
    reason = " ".join(html.unescape(re.search(r"<main[^>]*>.*?<p>(.*?)</p>", refusal.text(), re.S).group(1)).split())

    page.keyboard.press("1")
    page.keyboard.press("Escape")  # leaving the rationale sends the answer
    page.wait_for_function("id => document.querySelector(`#${id} .save-status`).textContent.startsWith('Not saved')", arg=f"c-{key}")
    status = page.locator(f"#c-{key} .save-status")
    assert status.inner_text() == f"Not saved: {reason}"
    assert not Label.objects.filter(assignment=assignment).exists()


def test_it_says_not_saved_when_the_session_ended(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[0].key
    page.context.clear_cookies(name="sessionid")  # logged out, as when the session expires

    page.keyboard.press("1")
    page.keyboard.press("Escape")  # leaving the rationale sends the answer
    page.wait_for_function("id => document.querySelector(`#${id} .save-status`).textContent.startsWith('Not saved')", arg=f"c-{key}")
    status = page.locator(f"#c-{key} .save-status")
    assert status.inner_text().startswith("Not saved: you are logged out. Log in again in another tab")
    assert page.locator("form.criterion input[name=username]").count() == 0  # the login page is not swapped in
    assert not Label.objects.filter(assignment=assignment).exists()


# --- nothing typed is lost when the page goes ----------------------------------------------


def choose_and_type(page, assignment: Assignment, key: str, text: str) -> None:
    """Chooses a winner (saved at once), then types a rationale and waits 100 ms: less than the
    save delay, so the rationale is still unsaved when the test leaves."""
    page.locator(f"#c-{key} input[name=position][value='1']").click()
    wait_saved(page, f"c-{key}")
    page.locator(f"#c-{key} textarea[name=rationale]").click()
    page.keyboard.insert_text(text)
    page.wait_for_timeout(100)
    assert stored_rationale(assignment, key) == ""  # not saved yet


def test_it_saves_a_rationale_typed_100_ms_before_leaving_by_a_link(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[0].key
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    text = "Typed just before leaving: the second is clearer."
    choose_and_type(page, assignment, key, text)

    page.get_by_role("link", name="Pairwise").click()
    page.wait_for_url(re.compile(r"/$"))

    assert wait_for_rationale(page, assignment, key, text) == text
    assert dialogs == []  # sent on the way out, so there was nothing to warn about
    assert Label.objects.get(assignment=assignment, criterion__key=key).winner


def test_it_saves_a_rationale_typed_100_ms_before_the_tab_closes(new_page, live_demo):
    page = new_page()
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[1].key
    text = "Typed just before closing the tab."
    choose_and_type(page, assignment, key, text)

    page.close(run_before_unload=True)

    assert wait_for_rationale(new_page(), assignment, key, text) == text


def test_it_saves_pending_text_when_the_page_is_hidden(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[2].key
    flushes = []
    page.on(
        "request",
        lambda request: (
            flushes.append(request.post_data_buffer)
            if request.method == "POST" and "hx-request" not in request.headers and "/criteria/" in request.url
            else None
        ),
    )
    text = "Typed just before switching to another tab."
    choose_and_type(page, assignment, key, text)

    # Headless Chromium never hides a page: announce it as the browser does when the tab is switched away.
    page.evaluate("""() => {
        Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
        document.dispatchEvent(new Event("visibilitychange"));
    }""")

    assert wait_for_rationale(page, assignment, key, text) == text
    assert len(flushes) == 1 and b'name="flush"' in flushes[0]  # a beacon, not the htmx save


# --- times, the rationale box, marked passages -------------------------------------------------


def test_it_shows_times_in_the_browsers_time_zone(new_page, live_demo):
    zone = "Pacific/Chatham"  # UTC+12:45 or +13:45: no chance of matching UTC by accident
    user = User.objects.get(username="annotator1")
    campaign = Campaign.objects.get(name="Demo campaign")
    from annotate.services.claims import assignment_claim_next

    done = assignment_claim_next(campaign=campaign, user=user)
    for criterion in criteria_of(done):
        answer_by_service(done, criterion)
    overall_save(assignment=done, user=user, value="1")
    assignment_submit(assignment=done, user=user)
    done.refresh_from_db()

    page = new_page(timezone_id=zone)
    log_in(page, "annotator1", "demo-annotator1")
    page.get_by_text("Submitted pairs").click()
    expected = done.submitted_at.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")
    assert page.locator("main time").first.inner_text() == expected

    assignment = start_next_pair(page)
    key = criteria_of(assignment)[0].key
    page.keyboard.press("1")
    wait_saved(page, f"c-{key}")
    saved_at = Label.objects.get(assignment=assignment, criterion__key=key).saved_at
    assert page.locator(f"#c-{key} .save-status").inner_text() == "Saved " + saved_at.astimezone(ZoneInfo(zone)).strftime("%H:%M:%S")
    assert saved_at.strftime("%H:%M") != saved_at.astimezone(ZoneInfo(zone)).strftime("%H:%M")
    # The element keeps the exact time; without JavaScript its text is that time in UTC, saying so.
    assert page.locator(f"#c-{key} .save-status time").get_attribute("datetime") == saved_at.isoformat()


def test_it_grows_the_rationale_box_with_its_text(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    key = criteria_of(assignment)[0].key
    textarea = page.locator(f"#c-{key} textarea[name=rationale]")
    empty = textarea.bounding_box()["height"]
    page.keyboard.press("1")
    page.keyboard.insert_text("\n".join(f"Line {i} of a long rationale." for i in range(12)))
    grown = textarea.bounding_box()["height"]
    assert grown > 4 * empty
    assert textarea.evaluate("t => t.scrollHeight <= t.clientHeight + 1")  # all of it shows, no inner scroll bar


MARKS = """id => Array.from(document.querySelectorAll(`article.prose mark[data-span="${id}"]`)).map(m => m.textContent).join("")"""


def shown_article(assignment: Assignment, position: str):
    pair = assignment.pair
    return pair.article_a if (position == "1") == assignment.a_first else pair.article_b


def test_it_highlights_marked_passages_in_the_article_and_removes_them_there(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    # A mark made earlier, from the title across into the first paragraph: more than one element.
    # The text as the page shows it: the demo campaign's headings are neutral (sentence case, the
    # same length), so a Title Case heading of the article drawn reads lower-cased there.
    shown_html = shown_article(assignment, "2").html
    text = plain_text(headings_neutral(shown_html) if assignment.pair.campaign.neutral_headings else shown_html)
    start = text.index("\n") - 5
    end = start + 30
    earlier = span_add(assignment=assignment, position="2", start=start, end=end, quote=text[start:end], polarity=-1, comment="vague")
    page.reload()
    article_text = page.evaluate("() => document.querySelector('article.prose[data-position=\"2\"]').textContent")
    assert article_text == text  # highlighting adds no text: offsets stay true
    assert page.evaluate(MARKS, earlier.pk) == text[start:end].replace("\n", "")
    assert page.locator(f"article.prose mark.span-down[data-span='{earlier.pk}']").count() >= 2

    # A new mark, selected in Article 1, is highlighted there at once.
    page.evaluate(SELECT_IN_ARTICLE, ["1", 12])
    page.get_by_role("button", name="▲ Good").click()
    page.wait_for_function(IDLE)
    new = Span.objects.exclude(pk=earlier.pk).get(assignment=assignment)
    page.locator(f"article.prose[data-position='1'] mark.span-up[data-span='{new.pk}']").wait_for()
    assert page.evaluate(MARKS, new.pk) == new.quote

    # Clicking a highlight offers to remove it; removing it there removes it everywhere.
    page.locator(f"article.prose mark[data-span='{earlier.pk}']").first.click()
    popover = page.locator("#mark-popover")
    assert popover.is_visible() and "Marked bad: vague" in popover.inner_text()
    popover.get_by_role("button", name="Remove this mark").click()
    page.wait_for_function(IDLE)
    page.locator(f"article.prose mark[data-span='{earlier.pk}']").first.wait_for(
        state="detached"
    )  # highlights follow the list once it settles
    assert list(Span.objects.filter(assignment=assignment).values_list("pk", flat=True)) == [new.pk]
    assert page.locator(f"article.prose mark[data-span='{earlier.pk}']").count() == 0
    assert page.locator(f"#spans li[data-span='{earlier.pk}']").count() == 0
    assert page.locator(f"article.prose mark[data-span='{new.pk}']").count() == 1
    assert page.evaluate("() => document.querySelector('article.prose[data-position=\"2\"]').textContent") == text


# --- the home page and narrow screens --------------------------------------------------------


def test_it_shows_the_pairs_left_on_the_home_page(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assert "8 pairs left for you." in page.locator("main").inner_text()  # 8 pairs, each for both annotators
    assignment = start_next_pair(page)
    for criterion in criteria_of(assignment):
        answer_by_service(assignment, criterion)
    overall_save(assignment=assignment, user=assignment.annotator, value="1")
    assignment_submit(assignment=assignment, user=assignment.annotator)
    page.goto("/")
    assert "1 pair submitted. 7 pairs left for you." in page.locator("main").inner_text()


def test_it_says_it_needs_a_wider_screen_under_900_px_and_still_works(new_page, live_demo):
    page = new_page(viewport={"width": 390, "height": 844})
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    note = page.locator("#narrow-note")
    assert note.is_visible() and "at least 900 pixels wide" in note.inner_text()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    first = criteria_of(assignment)[0].key
    page.evaluate("() => window.scrollTo(0, 0)")
    top = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top + window.scrollY", f"c-{first}")
    assert top < 2 * 844  # both articles scroll in boxes of their own: the criteria come soon after
    form = page.locator(f"#c-{first}")
    form.locator("input[name=position][value='2']").click()
    form.locator("textarea[name=rationale]").fill(REASON)
    form.locator("textarea[name=rationale]").blur()
    wait_saved(page, f"c-{first}")
    assert page.locator("#progress").inner_text() == "1 / 39"

    page.set_viewport_size({"width": 1280, "height": 800})
    assert not note.is_visible()


def test_it_reflows_researcher_pages_without_sideways_scrolling_at_390_px(new_page, live_demo):
    from tests.calibration_builders import hand_dataset

    calibrated = hand_dataset(User.objects.create_user("alice"), User.objects.create_user("bob"))
    demo = Campaign.objects.get(name="Demo campaign")
    page = new_page(viewport={"width": 390, "height": 844})
    log_in(page, "researcher", "demo-researcher")
    topic = demo.pairs.first().topic
    urls = ["/campaigns/", "/campaigns/new/", "/judges/", "/topics/", f"/topics/{topic.pk}/", "/accounts/new/"]
    for campaign in (demo, calibrated):
        urls += [
            f"/campaigns/{campaign.pk}/",
            f"/campaigns/{campaign.pk}/members/",
            f"/campaigns/{campaign.pk}/blindness/",
            f"/judges/campaign/{campaign.pk}/",
            f"/calibration/campaign/{campaign.pk}/",
            f"/calibration/campaign/{campaign.pk}/plan/",
        ]
    wide = {}
    for url in urls:
        response = page.goto(url)
        assert response.status == 200, url
        page.wait_for_load_state("networkidle")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > 390:
            wide[url] = width
        brand, menu = page.locator(".topbar .brand").bounding_box(), page.locator(".topbar nav").bounding_box()
        apart = brand["x"] + brand["width"] <= menu["x"] or brand["y"] + brand["height"] <= menu["y"]
        assert apart, f"{url}: the menu overlaps the logo"
    assert wide == {}
