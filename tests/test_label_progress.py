"""A criterion is done only when complete: the progress counter, the criterion's border and where the page opens.

The htmx save answers the counter (out of band) and the criterion's state (`data-state`), which
static/annotate.js puts on the criterion's border; the page renders the same from the database.
"""

import re

import pytest
from django.urls import reverse

from annotate import selectors
from annotate.models import Criterion
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(campaign, alice):
    """The campaign fixture asks for rationales of at least 5 characters."""
    return assignment_claim_next(campaign=campaign, user=alice)


def save(client, work, key, data):
    return client.post(reverse("label-save", args=[work.pk, key]), data, HTTP_HX_REQUEST="true")


def progress_and_state(response) -> tuple[str, str]:
    html = response.content.decode()
    return re.search(r'id="progress" hx-swap-oob="true">([^<]+)<', html).group(1), re.search(r'data-state="([a-z]*)"', html).group(1)


def test_it_counts_a_winner_without_its_rationale_as_not_done(client, alice, work):
    client.force_login(alice)
    assert progress_and_state(save(client, work, "ww_cc_1", {"position": "1"})) == ("0 / 39", "partial")
    assert progress_and_state(save(client, work, "ww_cc_1", {"rationale": "abcd"})) == ("0 / 39", "partial")
    assert progress_and_state(save(client, work, "ww_cc_1", {"rationale": "  abcde \n"})) == ("1 / 39", "complete")
    assert progress_and_state(save(client, work, "ww_cc_2", {"rationale": "a reason, but no winner"})) == ("1 / 39", "")
    assert progress_and_state(save(client, work, "ww_cc_1", {"rationale": "    \n\n\n\n\n\n"})) == ("0 / 39", "partial")


def test_it_renders_borders_and_the_counter_from_the_same_rule(client, alice, work):
    criteria = list(Criterion.objects.filter(criterion_set=work.pair.campaign.criterion_set).order_by("order"))
    label_save(assignment=work, criterion=criteria[0], user=alice, position="1", rationale="clear prose")
    label_save(assignment=work, criterion=criteria[1], user=alice, position="2", rationale="meh")
    label_save(assignment=work, criterion=criteria[2], user=alice, rationale="a reason without a winner")
    client.force_login(alice)
    html = client.get(reverse("assignment", args=[work.pk])).content.decode()
    border = {key: classes for classes, key in re.findall(r'<form class="criterion ?([a-z ]*)" id="c-([\w-]+)"', html)}
    assert [border[c.key] for c in criteria[:4]] == ["complete", "partial", "", ""]
    assert 'id="progress">1 / 39<' in html
    # The page opens on the first criterion that is not done.
    assert f'data-first-open="c-{criteria[1].key}"' in html


def test_it_opens_on_the_overall_question_once_every_criterion_is_done(client, alice, catalogue):
    from annotate.services.campaigns import campaign_create

    campaign = campaign_create(
        name="Overall", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, ask_overall=True, annotators=[alice]
    )
    work = assignment_claim_next(campaign=campaign, user=alice)
    for criterion in Criterion.objects.filter(criterion_set=catalogue):
        label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose here")
    page = selectors.annotation_page(assignment=work)
    assert (page["done"], page["first_open"], [gap.key for gap in page["gaps"]]) == (39, "overall", ["overall"])


def test_it_counts_progress_in_one_query(alice, work, django_assert_num_queries):
    criterion = Criterion.objects.get(criterion_set=work.pair.campaign.criterion_set, key="ww_cc_1")
    label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="clear prose")
    with django_assert_num_queries(1):
        assert selectors.assignment_progress(assignment=work) == (1, 39)
