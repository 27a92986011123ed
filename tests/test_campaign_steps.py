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
