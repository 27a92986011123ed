"""Adjudication stays blind (issue 35): items come in an order drawn per adjudicator, a topic already
met only when nothing else is left, a campaign may split each topic's pairs among its adjudicators,
and the blindness audit counts the items whose reference an adjudicator could infer, with n."""

import pytest
from django.test import Client

from annotate.adjudication_selectors import next_open
from annotate.blindness_adjudication import adjudicator_exposure
from annotate.models import Adjudication, Criterion
from annotate.services.adjudication import campaign_adjudicators_add, campaign_set_adjudication_by_topic
from annotate.services.answers import adjudication_save

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(campaign, rachel, django_user_model):
    """An item on each of the campaign's 8 pairs (4 topics, 2 pairs each sharing the reference); two adjudicators."""
    criterion = Criterion.objects.filter(criterion_set=campaign.criterion_set).order_by("order").first()
    for pair in campaign.pairs.order_by("pk"):
        Adjudication.objects.create(
            campaign=campaign,
            pair=pair,
            criterion=criterion,
            kind="split",
            a_first=True,
            order="ab",
            opened_by=rachel,
            opened_at=campaign.created_at,
        )
    people = [django_user_model.objects.create_user(name, password=f"{name}-password") for name in ("dana", "eve")]
    campaign_adjudicators_add(campaign=campaign, users=people)
    return people


def work_through(campaign, user) -> list[Adjudication]:
    """Decides every item the schedule gives `user`, in the order given."""
    given = []
    while (item := next_open(campaign=campaign, user=user, after=given[-1] if given else None)) is not None:
        adjudication_save(adjudication=item, user=user, position="1", reason="Article 1 covers it.")
        given.append(item)
    return given


def test_it_gives_a_topic_already_met_only_when_nothing_else_is_left(campaign, queue):
    given = work_through(campaign, queue[0])

    topics = [item.pair.topic_id for item in given]
    assert len(given) == 8
    assert len(set(topics[:4])) == 4, f"a topic came back while others were left: {topics}"


def test_it_draws_the_order_per_adjudicator_not_in_pair_order(campaign, queue):
    first = [item.pk for item in work_through(campaign, queue[0])]
    Adjudication.objects.update(winner="", reason="", decided_by=None, decided_at=None)
    second = [item.pk for item in work_through(campaign, queue[1])]

    assert first != sorted(first) and first != second


def test_it_splits_each_topics_pairs_among_the_adjudicators(campaign, queue):
    campaign_set_adjudication_by_topic(campaign=campaign, by_topic=True)
    dana, eve = queue
    mine = {person.username: work_through(campaign, person) for person in queue}

    assert len(mine["dana"]) == len(mine["eve"]) == 4
    for items in mine.values():
        assert len({item.pair.topic_id for item in items}) == 4  # each adjudicator meets each topic once
    Adjudication.objects.update(winner="", reason="", decided_by=None, decided_at=None)
    client = Client()
    client.force_login(dana)
    assert client.get(f"/adjudicate/{mine['eve'][0].pk}/").status_code == 403
    assert client.get(f"/adjudicate/{mine['dana'][0].pk}/").status_code == 200


def test_it_shows_adjudicators_their_next_item_not_every_item_by_topic(campaign, queue):
    client = Client()
    client.force_login(queue[0])
    page = client.get(f"/campaigns/{campaign.pk}/adjudication/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "Next open item" in body and "You have decided no item yet." in body
    assert all(pair.topic.title not in body for pair in campaign.pairs.select_related("topic"))


def test_it_counts_the_items_whose_reference_an_adjudicator_could_infer(campaign, queue, rachel):
    shared = adjudicator_exposure(campaign=campaign)
    assert (shared.n_items, shared.n_scheduled_exposed) == (8, 8)  # anyone may be given both pairs of a topic

    campaign_set_adjudication_by_topic(campaign=campaign, by_topic=True)
    split = adjudicator_exposure(campaign=campaign)
    assert (split.n_items, split.n_scheduled_exposed) == (8, 0)

    # Decided: dana decided both pairs of one topic (as pair order used to give them): both exposed, the reference named.
    topic_items = list(Adjudication.objects.filter(pair__topic=campaign.pairs.first().topic))
    for item in topic_items:
        Adjudication.objects.filter(pk=item.pk).update(winner="a", reason="r", decided_by=queue[0], decided_at=campaign.created_at)
    decided = adjudicator_exposure(campaign=campaign)
    assert (decided.n_decided, decided.n_decided_exposed, decided.n_named_reference) == (2, 2, 2)

    client = Client()
    client.force_login(rachel)
    page = client.get(f"/campaigns/{campaign.pk}/blindness/").content.decode()
    assert "The adjudicator&#x27;s view" in page or "The adjudicator's view" in page
    assert "0% (0 of 8)" in page and "n = 8 items" in page and "100% (2 of 2)" in page and "n = 2 decided items" in page


def test_it_gives_the_adjudicators_view_in_the_blindness_command_with_n(campaign, queue):
    import json

    from tests.helpers import run

    text = run("blindness_report", "--campaign", campaign.name)
    assert text.code == 0, text.err
    assert "## The adjudicator's view" in text.out and "100% (8 of 8) (n = 8 items; split by topic: no)" in text.out
    data = json.loads(run("blindness_report", "--campaign", campaign.name, "--format", "json").out)
    assert data["adjudicator_view"] == {
        "n_items": 8, "n_scheduled_exposed": 8, "n_decided": 0, "n_decided_exposed": 0, "n_named_reference": 0, "split_by_topic": False,
    }  # fmt: skip
