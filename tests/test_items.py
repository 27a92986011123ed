"""Items hold their articles in slots and viewers see them in a drawn order (`protocols.order`,
`annotate.ItemArticle`, issue 38): every path that makes a pair writes its slots, and every order is a
permutation of the item's slots that agrees with the pair's `a_first`."""

import io
import itertools
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from annotate.models import Assignment, Campaign, ItemArticle, Pair
from annotate.services.campaigns import campaign_create_from_pairs
from annotate.services.claims import assignment_claim_next
from protocols import order as orders


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
