"""A campaign that shows the agents' steps beside their articles (issue 42, item 2): refused unless
every article of every pair has steps, and then drawn blind, in the order the pair is shown."""

import io
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotate.models import Article, Campaign
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from common.names import REFERENCE_SYSTEM

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "steps" / "agent_traces.jsonl"
AGENTS = ["agent.alpha-2", "agent.beta.v3"]


@pytest.fixture
def traces(db):
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=io.StringIO())
    call_command("import_criteria", "fixtures/criteria/wiki_writing.json", stdout=io.StringIO())


def steps_campaign(**extra) -> Campaign:
    from annotate.models import CriterionSet

    options = {"systems": AGENTS, "pair_mode": Campaign.PairMode.ALL, **extra}
    return campaign_create(
        name="Traces", criterion_set=CriterionSet.objects.get(key="wiki_writing"), benchmark="traces", show_steps=True, **options
    )


def test_it_refuses_steps_when_an_article_of_a_pair_has_none_and_names_it(traces):
    wiki = Article.objects.filter(topic__benchmark="traces").first()
    Article.objects.create(
        topic=wiki.topic, system=wiki.system.__class__.objects.create(key=REFERENCE_SYSTEM, name="Wikipedia", is_reference=True),
        raw_markdown="Text.", display_markdown="Text.", html="<p>Text.</p>", word_count=1, raw_word_count=1, content_hash="x",
    )  # fmt: skip
    with pytest.raises(ValidationError) as refused:
        steps_campaign(systems=[REFERENCE_SYSTEM, *AGENTS], pair_mode=Campaign.PairMode.REFERENCE)
    [message] = refused.value.messages
    assert message.startswith("Steps can be shown only when every article of every pair has them")
    assert f"1 article has none: '{wiki.topic.title}' by {REFERENCE_SYSTEM}." in message
    assert not Campaign.objects.filter(name="Traces").exists()


def test_it_shows_each_sides_steps_in_the_order_shown_and_nothing_that_names_a_system(traces, client):
    annotator = User.objects.create_user("ada", password="pw-ada-123")
    campaign = steps_campaign(annotators=[annotator])
    assert campaign.show_steps and campaign.pairs.count() == 4
    assignment = assignment_claim_next(campaign=campaign, user=annotator)
    client.force_login(annotator)
    page = client.get(f"/work/{assignment.pk}/").content.decode()
    first, second = (assignment.pair.article_a, assignment.pair.article_b)[:: 1 if assignment.a_first else -1]
    for position, article in (("1", first), ("2", second)):
        block = page[page.index(f'id="steps-{position}"') :]
        block = block[: block.index("</details>")]
        assert len(re.findall(r'<li class="step"', block)) == article.steps.count()
        assert article.steps.first().kind in block
    for leak in [*AGENTS, "Agent Alpha", "Agent Beta", "example.com", "example.org", "https://"]:
        assert leak not in page


def claimed(**extra):
    annotator = User.objects.create_user("lin", password="pw-lin-12345")
    campaign = steps_campaign(annotators=[annotator], **extra)
    return annotator, campaign, assignment_claim_next(campaign=campaign, user=annotator)


def test_it_saves_a_vote_on_a_step_changes_and_takes_it_back_with_an_audit_row_each_time(traces):
    from annotate.models import LabelChange, StepVote
    from annotate.services.step_votes import step_vote_save

    annotator, campaign, assignment = claimed()
    step = assignment.pair.article_a.steps.order_by("order")[2]
    step_vote_save(assignment=assignment, step_id=step.pk, vote="up", user=annotator)
    step_vote_save(assignment=assignment, step_id=step.pk, vote="down", comment="  The page read was a forum.  ", user=annotator)
    vote = StepVote.objects.get()
    assert (vote.vote, vote.comment, vote.step_id) == (-1, "The page read was a forum.", step.pk)
    step_vote_save(assignment=assignment, step_id=step.pk, vote="", user=annotator)
    assert not StepVote.objects.exists()
    trail = list(LabelChange.objects.filter(step=step).values_list("field", "old_value", "new_value"))
    assert trail == [
        ("step_vote", "", "up"),
        ("step_vote", "up", "down"),
        ("step_comment", "", "The page read was a forum."),
        ("step_vote", "down", ""),
        ("step_comment", "The page read was a forum.", ""),
    ]


def test_it_refuses_a_vote_on_a_step_of_another_pair_or_in_a_campaign_without_steps(traces):
    from annotate.services.step_votes import step_vote_save

    annotator, campaign, assignment = claimed()
    pair = assignment.pair
    elsewhere = campaign.pairs.exclude(pk=pair.pk).first().article_a.steps.first()
    with pytest.raises(ValidationError, match="No such step on this pair"):
        step_vote_save(assignment=assignment, step_id=elsewhere.pk, vote="up", user=annotator)
    with pytest.raises(ValidationError, match="Vote up or down"):
        step_vote_save(assignment=assignment, step_id=pair.article_a.steps.first().pk, vote="sideways", user=annotator)
    Campaign.objects.filter(pk=campaign.pk).update(show_steps=False)
    assignment.pair.campaign.refresh_from_db()
    with pytest.raises(ValidationError, match="does not show the agents' steps"):
        step_vote_save(assignment=assignment, step_id=pair.article_a.steps.first().pk, vote="up", user=annotator)


def test_it_holds_the_submission_until_every_step_has_a_vote_when_the_campaign_asks(traces):
    from annotate.services.labelling import assignment_missing
    from annotate.services.step_votes import step_vote_save

    annotator, campaign, assignment = claimed(step_votes=Campaign.StepVotes.EVERY)
    pair = assignment.pair
    total = pair.article_a.steps.count() + pair.article_b.steps.count()
    assert f"steps: vote up or down on every step of the agents ({total} steps without a vote)" in assignment_missing(assignment=assignment)
    for step in [*pair.article_a.steps.all(), *pair.article_b.steps.all()]:
        step_vote_save(assignment=assignment, step_id=step.pk, vote="up", user=annotator)
    assert not [m for m in assignment_missing(assignment=assignment) if m.startswith("steps:")]


def test_it_answers_a_vote_posted_by_htmx_with_the_step_alone(traces, client):
    annotator, campaign, assignment = claimed()
    client.force_login(annotator)
    step = assignment.pair.article_b.steps.first()
    answer = client.post(f"/work/{assignment.pk}/steps/{step.pk}/vote/", {"vote": "down", "comment": ""}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200
    body = answer.content.decode()
    assert body.lstrip().startswith('<li class="step voted-down"') and 'aria-pressed="true"' in body
    bad = client.post(f"/work/{assignment.pk}/steps/{step.pk}/vote/", {"vote": "maybe"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 422 and "Vote up or down" in bad.content.decode()


def test_it_takes_the_steps_options_from_the_web_form_and_refuses_them_there_too(traces, client):
    from django.urls import reverse

    from annotate.models import CriterionSet, System

    staff = User.objects.create_user("rosa", password="pw-rosa-12345", is_staff=True)
    client.force_login(staff)
    form = {
        "criterion_set": CriterionSet.objects.get(key="wiki_writing").pk,
        "pair_mode": "all",
        "overlap": "1",
        "rationale_required": "on",
        "rationale_min_length": "12",
        "claim_timeout_minutes": "60",
        "show_steps": "on",
        "step_votes": "every",
    }
    agents = [s.pk for s in System.objects.filter(key__in=AGENTS)]
    made = client.post(reverse("campaign-new"), {**form, "name": "Form traces", "systems": agents})
    campaign = Campaign.objects.get(name="Form traces")
    assert made.status_code == 302 and campaign.show_steps and campaign.step_votes == Campaign.StepVotes.EVERY
    wiki = System.objects.create(key=REFERENCE_SYSTEM, name="Wikipedia", is_reference=True)
    topic = Article.objects.filter(topic__benchmark="traces").first().topic
    Article.objects.create(
        topic=topic, system=wiki, raw_markdown="Text.", display_markdown="Text.", html="<p>Text.</p>", word_count=1, raw_word_count=1,
        content_hash="x",
    )  # fmt: skip
    refused = client.post(
        reverse("campaign-new"), {**form, "name": "Form refused", "systems": [*agents, wiki.pk], "pair_mode": "reference"}
    )
    assert "Steps can be shown only when every article of every pair has them" in refused.content.decode()
    assert not Campaign.objects.filter(name="Form refused").exists()


def test_it_marks_a_passage_inside_a_step_counted_in_the_steps_text_and_lists_it_with_the_step(traces, client):
    from annotate.models import Span
    from annotate.rendering import plain_text

    annotator, campaign, assignment = claimed()
    client.force_login(annotator)
    first = (assignment.pair.article_a, assignment.pair.article_b)[0 if assignment.a_first else 1]
    step = max(first.steps.order_by("order"), key=lambda s: len(plain_text(s.html)))
    text = plain_text(step.html)
    word = text.split()[1]
    start = text.index(word)
    answer = client.post(
        f"/work/{assignment.pk}/spans/",
        {"position": "1", "step": str(step.pk), "start": start, "end": start + len(word), "quote": word, "polarity": "-1"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200, answer.content.decode()
    span = Span.objects.get()
    assert (span.step_id, span.article_id, span.quote) == (step.pk, first.pk, word)
    body = answer.content.decode()
    assert f'data-step="{step.pk}"' in body and f"Article 1, step {step.order + 1}: “{word}" in body
    # Offsets that fit the article but not the step's text, a step of the other article, and no number at all.
    refused = client.post(
        f"/work/{assignment.pk}/spans/",
        {"position": "1", "step": str(step.pk), "start": 0, "end": len(text) + 1, "quote": "x", "polarity": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert refused.status_code == 422 and "The selection is outside the step." in refused.content.decode()
    second = (assignment.pair.article_b, assignment.pair.article_a)[0 if assignment.a_first else 1]
    other = second.steps.first()
    refused = client.post(
        f"/work/{assignment.pk}/spans/",
        {"position": "1", "step": str(other.pk), "start": start, "end": start + len(word), "quote": word, "polarity": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert refused.status_code == 422 and "That step is not one of this article" in refused.content.decode()
    for bad in ("two", str(10**30)):
        refused = client.post(
            f"/work/{assignment.pk}/spans/",
            {"position": "1", "step": bad, "start": start, "end": start + len(word), "quote": word, "polarity": "1"},
            HTTP_HX_REQUEST="true",
        )
        assert refused.status_code == 422, bad
    assert Span.objects.count() == 1
