"""Reading the pair by keyboard in a real browser (issue 37): the matching-part key on a real sample
pair, paging each side, the reading position kept over a reload, the `?` list of keys, one save per
answer and none again on Submit.
"""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotate.alignment_selectors import section_maps
from annotate.models import Assignment, Campaign, CriterionSet, Label, SectionAlignment, Topic
from annotate.selectors import shown_articles
from annotate.services.answers import label_save, overall_save
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from tests.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    active_id,
    browser,
    close_context,
    live_demo,
    log_in,
    open_context,
    page,
    start_next_pair,
    wait_saved,
)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")

REASON = "Clearer on this point, and better sourced."
SCROLL_TOPS = "() => [document.getElementById('col-1').scrollTop, document.getElementById('col-2').scrollTop]"
# Where `id` sits in its column: its top relative to the column's visible top, and the column's height.
PLACE_IN_COLUMN = """id => { const el = document.getElementById(id), col = el.closest('.column');
    return [el.getBoundingClientRect().top - col.getBoundingClientRect().top, col.clientHeight]; }"""


@pytest.fixture
def short_page(browser, live_server):  # noqa: F811
    """A page whose article columns are short, so that even the demo's articles scroll."""
    context = open_context(browser, live_server, viewport={"width": 1280, "height": 520})
    yield context.new_page()
    close_context(context)


def test_it_brings_the_matching_part_of_the_other_article_into_view_with_one_key(page, live_server, sample_path):  # noqa: F811
    call_command("import_wlc", str(sample_path), "--quiet-progress")
    reader = User.objects.create_user("reader", password="reader-password")
    topic = Topic.objects.get(title="Modes of underwater diving")
    rubric = CriterionSet.objects.order_by("-version").first()
    campaign = campaign_create(
        name="Sections",
        criterion_set=rubric,
        systems=["wikipedia", "gemini_3_pro"],
        reference="wikipedia",
        annotators=[reader],
        benchmark=topic.benchmark,
    )
    campaign.pairs.exclude(topic=topic).delete()
    assignment = assignment_claim_next(campaign=campaign, user=reader)
    log_in(page, "reader", "reader-password")
    page.goto(f"/work/{assignment.pk}/")
    page.wait_for_load_state("load")

    alignment = SectionAlignment.objects.get()  # stored by the first view, once
    maps = section_maps(shown=shown_articles(assignment.pair, assignment.a_first), alignment=alignment)

    # A section of the first article whose counterpart is out of view while the reader is at it.
    def in_view(anchor: str) -> bool:
        top, height = page.evaluate(PLACE_IN_COLUMN, anchor)
        return 0 <= top < height

    # (The second article stays where it is while the first one scrolls: "Scroll both together" is off.)
    candidates = [row for row in maps["1"][1:] if row["match"] and not in_view(row["match"]["anchor"])]
    assert candidates, "no section of this pair has a counterpart out of view"
    row = candidates[len(candidates) // 2]
    # The reader has scrolled the first article to this section.
    page.evaluate(
        "id => { const el = document.getElementById(id), col = el.closest('.column'); col.scrollTop += el.getBoundingClientRect().top - col.getBoundingClientRect().top - 40; }",
        row["anchor"],
    )
    top, height = page.evaluate(PLACE_IN_COLUMN, row["match"]["anchor"])
    assert not 0 <= top < height  # its counterpart is out of view
    page.keyboard.press("m")  # one key
    top, height = page.evaluate(PLACE_IN_COLUMN, row["match"]["anchor"])
    assert 0 <= top < height / 3
    assert row["title"] in page.locator("#reading-note").inner_text()  # names the section it matched
    assert SectionAlignment.objects.count() == 1


def test_it_pages_each_article_by_keyboard(short_page, live_demo):  # noqa: F811
    page = short_page
    log_in(page, "annotator1", "demo-annotator1")
    start_next_pair(page)
    room = page.evaluate(
        "() => ['col-1', 'col-2'].map(id => { const c = document.getElementById(id); return [c.scrollHeight - c.clientHeight, c.clientHeight]; })"
    )
    assert room[0][0] > 0 and room[1][0] > 0

    page.keyboard.press("]")
    assert page.evaluate("() => document.activeElement.id") == "col-2"
    page.keyboard.press(" ")
    left, right = page.evaluate(SCROLL_TOPS)
    assert left == 0 and right == pytest.approx(min(room[1][0], 0.9 * room[1][1]), abs=2)
    page.keyboard.press("Shift+ ")
    assert page.evaluate(SCROLL_TOPS) == [0, 0]

    page.keyboard.press("[")
    assert page.evaluate("() => document.activeElement.id") == "col-1"
    page.keyboard.press(" ")
    left, right = page.evaluate(SCROLL_TOPS)
    assert left == pytest.approx(min(room[0][0], 0.9 * room[0][1]), abs=2) and right == 0


def test_it_restores_the_reading_position_of_each_side_after_a_reload(short_page, live_demo):  # noqa: F811
    page = short_page
    log_in(page, "annotator1", "demo-annotator1")
    start_next_pair(page)
    page.keyboard.press("[")
    page.keyboard.press(" ")
    page.keyboard.press("]")
    page.keyboard.press(" ")
    page.keyboard.press(" ")
    before = page.evaluate(SCROLL_TOPS)
    assert before[0] > 0 and before[1] > 0
    page.wait_for_timeout(300)  # the position is kept once scrolling pauses
    page.reload()
    page.wait_for_load_state("load")
    assert page.evaluate(SCROLL_TOPS) == pytest.approx(before, abs=2)


def test_it_lists_every_key_on_question_mark(page, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    start_next_pair(page)
    overlay = page.locator("#keys-overlay")
    assert overlay.is_hidden()
    page.keyboard.press("?")
    assert overlay.is_visible()
    text = overlay.inner_text()
    for key in ("[", "]", "Space", "m", "j", "k", "n", "1", "2", "b", "Esc", "Ctrl", "Enter", "?"):
        assert key in text, key
    page.keyboard.press("j")  # the list takes the keys while it is open
    page.keyboard.press("Escape")
    assert overlay.is_hidden()


def test_it_saves_a_choice_and_its_rationale_in_one_post_and_sends_nothing_again_on_submit(page, live_demo):  # noqa: F811
    Campaign.objects.filter(name="Demo campaign").update(ask_overall=True)
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/criteria/" in r.url else None)
    criteria = list(assignment.pair.campaign.criterion_set.criteria.order_by("order"))
    first = criteria[0]
    assert active_id(page) == f"c-{first.key}"
    page.keyboard.press("1")
    page.keyboard.type(REASON)
    page.keyboard.press("Escape")
    wait_saved(page, f"c-{first.key}")
    page.wait_for_timeout(3500)  # past every save delay: nothing more is sent
    assert len(posts) == 1
    assert Label.objects.get(assignment=assignment, criterion=first).rationale == REASON

    for criterion in criteria[1:]:
        label_save(assignment=assignment, criterion=criterion, user=assignment.annotator, position="2", rationale=REASON)
    page.reload()
    page.locator("#overall").focus()
    page.keyboard.press("b")  # the overall question's "Both bad"
    wait_saved(page, "overall")
    assert Assignment.objects.get(pk=assignment.pk).overall == "both_bad"
    posts.clear()
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda url: not url.endswith(f"/work/{assignment.pk}/"))  # the guess question or the next item
    assert posts == []  # everything was acknowledged: Submit sent no answer again
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED


def test_it_keeps_an_overall_answer_chosen_by_service_when_submitting(page, live_demo):  # noqa: F811
    # The overall answer stored elsewhere is not sent again either: the page starts from what it was given.
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    for criterion in assignment.pair.campaign.criterion_set.criteria.all():
        label_save(assignment=assignment, criterion=criterion, user=assignment.annotator, position="1", rationale=REASON)
    if assignment.pair.campaign.ask_overall:
        overall_save(assignment=assignment, user=assignment.annotator, value="1")
    page.reload()
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and ("/criteria/" in r.url or "/overall/" in r.url) else None)
    page.locator("#submit-form button[type=submit]").click()
    page.wait_for_url(lambda url: not url.endswith(f"/work/{assignment.pk}/"))  # the guess question or the next item
    assert posts == []


def test_it_flags_a_pair_and_staff_void_it_for_everyone(page, browser, live_server, live_demo):  # noqa: F811
    log_in(page, "annotator1", "demo-annotator1")
    assignment = start_next_pair(page)
    page.get_by_text("Flag this pair").first.click()
    page.get_by_label("An article is broken (empty, truncated, garbled)").check()
    page.locator("#flag textarea[name=note]").fill("Article 2 stops after its first paragraph.")
    page.locator("#flag button[type=submit]").click()
    page.locator("#flag [role=status]").wait_for()
    assert "You flagged this pair: An article is broken" in page.locator("#flag").inner_text()

    staff = open_context(browser, live_server)
    try:
        desk = staff.new_page()
        log_in(desk, "researcher", "demo-researcher")
        desk.goto(f"/campaigns/{assignment.pair.campaign_id}/")
        assert "Article 2 stops after its first paragraph." in desk.locator("#flags + p + table").inner_text()
        desk.get_by_label("Reason").fill("truncated generation")
        desk.get_by_role("button", name="Void this pair for everyone").click()
        desk.wait_for_url(lambda url: "/campaigns/" in url)
        assert "1 assignment voided" in desk.locator(".messages").inner_text()
        assert "Voided" in desk.locator("#flags + p + table").inner_text()
    finally:
        close_context(staff)

    assert Assignment.objects.get(pk=assignment.pk).status == "voided"
    page.goto("/")
    page.get_by_role("button", name="Start the next pair").click()  # the slot is free at once
    page.wait_for_url(lambda url: "/work/" in url and f"/work/{assignment.pk}/" not in url)
    refused = page.request.get(f"/work/{assignment.pk}/")
    assert refused.status == 403 and "voided" in refused.text()
