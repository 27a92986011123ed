"""The neutral emphasis switch racing claims, with real threads, on SQLite or PostgreSQL."""

import pytest
from django.core.exceptions import ValidationError

from annotate.models import Assignment, Campaign
from annotate.services.campaigns import campaign_create, campaign_set_neutral_emphasis
from annotate.services.claims import assignment_claim_next
from tests.test_claim_concurrency import fire

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("round_", range(3))
def test_it_switches_emphasis_only_while_nobody_has_claimed_even_when_both_happen_at_once(catalogue, alice, bob, round_):
    campaign = campaign_create(
        name=f"Race {round_}", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], annotators=[alice, bob]
    )

    def switch():
        try:
            campaign_set_neutral_emphasis(campaign=Campaign.objects.get(pk=campaign.pk), neutral_emphasis=True)
        except ValidationError as exc:
            return exc.messages
        return "switched"

    results, errors = fire([switch, lambda: assignment_claim_next(campaign=campaign, user=alice), switch,
                            lambda: assignment_claim_next(campaign=campaign, user=bob)])  # fmt: skip
    assert not errors
    switches = [results[0], results[2]]
    # Both claims got a pair whatever the switch did; a refused switch says why and changed nothing.
    assert results[1] is not None and results[3] is not None
    assert Assignment.objects.filter(pair__campaign=campaign).count() == 2
    for outcome in switches:
        assert outcome == "switched" or "Annotators have started" in outcome[0]
    assert Campaign.objects.get(pk=campaign.pk).neutral_emphasis == ("switched" in switches)
