"""Items hold their articles in slots and viewers see them in a drawn order (`protocols.order`,
`annotate.ItemArticle`, issue 38): every path that makes a pair or a reading writes its slots, pairs and
readings share one table whose kinds never mix, and every order is a permutation of the item's slots
that agrees with `a_first`."""

import io
import itertools
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from annotate.models import Assignment, Campaign, Item, ItemArticle, Pair, Reading
from annotate.services.campaigns import campaign_create_from_pairs
from annotate.services.claims import assignment_claim_next
from protocols import order as orders
from tests.reading_builders import campaign_with_readings, mixed_rubric


def test_it_draws_every_order_of_k_slots_and_only_those():
    for k in range(1, orders.MAX_ARTICLES + 1):
        assert orders.problem(orders.drawn(k), k) is None
    seen = Counter(orders.drawn(3) for _ in range(3000))
    assert set(seen) == {"".join(p) for p in itertools.permutations("abc")}
    assert min(seen.values()) > 350  # 500 expected each; a fixed or biased draw would miss


def test_it_names_what_is_wrong_with_an_order():
    assert orders.problem("ab", 2) is None and orders.problem("ba", 2) is None
    for bad in ("aa", "abc", "ac", "", None, ["a", "b"]):
        assert "is not a permutation of the slots a, b" in orders.problem(bad, 2)
    with pytest.raises(ValueError, match="an item holds 1 to 6 articles, not 7"):
        orders.natural(7)
    assert [orders.of_a_first(True), orders.of_a_first(False)] == ["ab", "ba"]
    assert orders.a_first("ab") and not orders.a_first("ba") and orders.a_first("a")


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_it_turns_positions_into_slots_and_back_under_every_order_of_k(k):
    for order in map("".join, itertools.permutations(orders.natural(k))):
        shown = [orders.slot_at(order, position) for position in range(1, k + 1)]
        assert "".join(shown) == order
        assert [orders.position_of(order, slot) for slot in shown] == list(range(1, k + 1))
    with pytest.raises(ValueError, match="position 0 is not one of 1 to 2"):
        orders.slot_at("ba", 0)
    with pytest.raises(ValueError, match="slot 'c' is not one of b, a"):
        orders.position_of("ba", "c")


def test_it_stores_and_shows_a_pairs_answers_through_its_order():
    from protocols import pairwise

    for order in ("ab", "ba"):
        for position in ("1", "2", "tie"):
            side = pairwise.stored_answer(position, order=order)
            assert side == (position if position == "tie" else orders.slot_at(order, int(position)))
            assert pairwise.shown_answer(side, order=order) == position


@pytest.mark.django_db
def test_it_writes_the_slots_of_every_pair_the_demo_makes():
    """The demo makes pairs by campaign creation, gold copies and a labels-only import; a campaign
    copied from its pairs makes more."""
    call_command("load_demo", stdout=io.StringIO())
    demo = Campaign.objects.get(name="Demo campaign")
    campaign_create_from_pairs(name="Demo again", source=demo, pair_ids=list(demo.pairs.values_list("pk", flat=True)[:3]))
    slots = sorted(ItemArticle.objects.values_list("item_id", "slot", "article_id"))

    pairs = list(Pair.objects.values_list("pk", "article_a_id", "article_b_id"))
    assert len(pairs) > 10 and Campaign.objects.filter(items__gold__isnull=False).exists()
    assert slots == sorted([(p, 0, a) for p, a, _ in pairs] + [(p, 1, b) for p, _, b in pairs])
    assert set(Pair.objects.values_list("kind", flat=True)) == {"pair"}


@pytest.mark.django_db
def test_it_records_the_order_a_claim_draws(demo_campaign):
    from django.contrib.auth.models import User

    work = assignment_claim_next(campaign=demo_campaign, user=User.objects.get(username="annotator1"))

    assert work.order == orders.of_a_first(work.a_first)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.filter(pk=work.pk).update(order=work.order[::-1])  # the database refuses a disagreeing order


@pytest.mark.django_db
def test_it_keeps_pairs_and_readings_in_one_table_without_mixing_them(catalogue, alice, tmp_path):
    campaign = campaign_with_readings(
        name="Mixed", criterion_set=mixed_rubric(tmp_path), systems=["wikipedia", "atlas_agent", "quill_researcher"], annotators=[alice]
    )
    items = list(campaign.items.values_list("pk", "kind"))
    pairs, readings = list(campaign.pairs), list(campaign.readings)

    assert pairs and readings and len(items) == len(pairs) + len(readings)
    assert {p.kind for p in pairs} == {"pair"} and {r.kind for r in readings} == {"reading"}
    assert not Pair.objects.filter(pk__in=[r.pk for r in readings]).exists()
    assert not Reading.objects.filter(pk__in=[p.pk for p in pairs]).exists()
    # A reading's one article is its slot a; every article of the campaign's pairs has its reading.
    assert sorted(ItemArticle.objects.filter(item__in=readings).values_list("item_id", "slot", "article_id")) == sorted(
        (r.pk, 0, r.article_a_id) for r in readings
    )
    assert {r.article_b_id for r in readings} == {None}
    assert {r.article_a_id for r in readings} == {a for p in pairs for a in (p.article_a_id, p.article_b_id)}


@pytest.mark.django_db
def test_it_refuses_an_item_whose_articles_do_not_fit_its_kind(catalogue, alice, tmp_path):
    campaign = campaign_with_readings(
        name="Mixed", criterion_set=mixed_rubric(tmp_path), systems=["wikipedia", "atlas_agent"], annotators=[alice]
    )
    pair, reading = campaign.pairs.first(), campaign.readings.first()
    for bad in (
        dict(kind=Item.Kind.READING, article_a_id=pair.article_a_id, article_b_id=pair.article_b_id),  # a reading of two
        dict(kind=Item.Kind.PAIR, article_a_id=pair.article_a_id, article_b_id=None),  # a pair of one
        dict(kind=Item.Kind.READING, article_a_id=reading.article_a_id, article_b_id=None),  # a second reading of an article
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            Item.objects.create(campaign=campaign, topic_id=pair.topic_id, **bad)
