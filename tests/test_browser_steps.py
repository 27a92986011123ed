"""The agents' steps under their articles, in a real browser (issue 42, item 2): opened and walked by
keyboard on each side, blind like the articles."""

import io
from pathlib import Path

from django.contrib.auth.models import User
from django.core.management import call_command

from annotate.models import Campaign, CriterionSet
from annotate.services.campaigns import campaign_create
from tests.test_browser import browser, live_demo, log_in, page, start_next_pair  # noqa: F401 (fixtures)

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "steps" / "agent_traces.jsonl"
FOCUSED_STEP = "() => document.activeElement.classList.contains('step') ? document.activeElement.id : null"


def open_traces_pair(page, username: str):
    """The traces fixture in a campaign showing steps, its first pair opened by ``username``; the
    assignment and its articles in the order shown."""
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=io.StringIO())
    call_command("import_criteria", "fixtures/criteria/wiki_writing.json", stdout=io.StringIO())
    password = f"pw-{username}-123"
    reader = User.objects.create_user(username, password=password)
    campaign_create(
        name=f"Traces for {username}",
        criterion_set=CriterionSet.objects.get(key="wiki_writing"),
        systems=["agent.alpha-2", "agent.beta.v3"],
        pair_mode=Campaign.PairMode.ALL,
        benchmark="traces",
        show_steps=True,
        annotators=[reader],
    )
    log_in(page, username, password)
    assignment = start_next_pair(page)
    return assignment, (assignment.pair.article_a, assignment.pair.article_b)[:: 1 if assignment.a_first else -1]


def test_it_opens_each_sides_steps_and_walks_them_by_keyboard(page, live_server):  # noqa: F811
    assignment, shown = open_traces_pair(page, "grace")
    steps = page.locator("details.steps")
    assert steps.count() == 2 and not steps.first.evaluate("d => d.open")

    page.locator("#col-1").focus()
    page.keyboard.press("s")
    assert page.locator("#steps-1").evaluate("d => d.open")
    assert page.evaluate(FOCUSED_STEP) == "a1-step-1"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(FOCUSED_STEP) == "a1-step-3"
    page.keyboard.press("ArrowUp")
    assert page.evaluate(FOCUSED_STEP) == "a1-step-2"
    assert page.locator("#steps-1 li.step").count() == shown[0].steps.count()

    page.keyboard.press("]")
    page.keyboard.press("s")
    assert page.locator("#steps-2").evaluate("d => d.open")
    assert page.evaluate(FOCUSED_STEP) == "a2-step-1"
    assert page.locator("#steps-2 li.step").count() == shown[1].steps.count()
    text = page.locator("#articles").inner_text()
    for leak in ("agent.alpha-2", "agent.beta.v3", "Agent Alpha", "Agent Beta", "example.com", "https://"):
        assert leak not in text


def test_it_votes_on_steps_by_keyboard_and_takes_a_vote_back(page, live_server):  # noqa: F811
    from annotate.models import LabelChange, StepVote

    assignment, shown = open_traces_pair(page, "hopper")
    page.locator("#col-1").focus()
    page.keyboard.press("s")
    page.keyboard.press("ArrowDown")  # step 2
    page.keyboard.press("+")
    page.locator("#a1-step-2.voted-up").wait_for()
    assert page.evaluate(FOCUSED_STEP) == "a1-step-2"  # the keys stay on the step voted
    page.keyboard.press("ArrowDown")
    page.keyboard.press("-")
    page.locator("#a1-step-3.voted-down").wait_for()
    page.keyboard.press("-")  # the same key again takes the vote back
    page.locator("#a1-step-3:not(.voted-down)").wait_for()
    second = shown[0].steps.get(order=1)
    assert list(StepVote.objects.filter(assignment=assignment).values_list("step_id", "vote")) == [(second.pk, 1)]
    assert LabelChange.objects.filter(assignment=assignment, field="step_vote").count() == 3
    page.locator("#a1-step-2 summary", has_text="Comment").click()
    page.locator("#a1-step-2 textarea").fill("A clear plan of the search.")
    page.locator("#a1-step-2").get_by_role("button", name="Save the comment").click()
    page.locator("#a1-step-2 textarea").wait_for()
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    assert StepVote.objects.get(assignment=assignment).comment == "A clear plan of the search."


def test_it_marks_a_passage_inside_a_step_by_keyboard_and_keeps_its_highlight_through_a_vote(page, live_server):  # noqa: F811
    from annotate.models import Span, StepVote
    from annotate.rendering import plain_text

    assignment, shown = open_traces_pair(page, "noether")
    # The first step with a text of its own (a search step may have only its query).
    step = next(s for s in shown[0].steps.order_by("order") if len(plain_text(s.html).split()) > 1)
    n = step.order + 1
    page.locator("#col-1").focus()
    page.keyboard.press("s")
    for _ in range(step.order):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("v")  # on a focused step: its first word
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("-")  # a selection: the passage is marked, the step is not voted
    page.locator(f"#a1-step-{n} mark.span-mark.span-down").first.wait_for()
    span = Span.objects.get(assignment=assignment)
    assert span.step_id == step.pk and span.article_id == shown[0].pk
    assert plain_text(step.html)[span.start : span.end] == span.quote and " " in span.quote
    assert span.start == plain_text(step.html).index(span.quote.split()[0])
    assert not StepVote.objects.filter(assignment=assignment).exists()
    # Listed with its step: among the marked passages, or beside the active criterion as its evidence.
    assert page.locator("li[data-span]", has_text=f"Article 1, step {n}:").count() == 1
    page.locator(f"#a1-step-{n}").focus()
    page.keyboard.press("+")  # no selection now: the focused step is voted, drawn anew with its mark
    page.locator(f"#a1-step-{n}.voted-up").wait_for()
    page.locator(f"#a1-step-{n} mark.span-mark").first.wait_for()
    assert StepVote.objects.get(assignment=assignment).vote == 1
