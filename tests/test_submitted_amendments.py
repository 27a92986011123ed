"""A submitted pair stays complete: amendments may change answers but never empty them."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Assignment, Criterion, Label
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from interchange import label_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted(campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    for criterion in Criterion.objects.filter(criterion_set=campaign.criterion_set):
        label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose")
    assignment_submit(assignment=work, user=alice)
    return work


def api(user):
    client = APIClient()
    client.force_login(user)
    return client


def test_it_refuses_to_empty_an_answer_of_a_submitted_pair_through_the_api(submitted, alice):
    rows_before = len(label_rows(submitted.pair.campaign))
    response = api(alice).put(reverse("api:label-save", args=[submitted.pk, "ww_cc_1"]), {"position": "", "rationale": ""}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "submitted" in errors[0]
    assert "Choose a winner." in errors
    label = Label.objects.get(assignment=submitted, criterion__key="ww_cc_1")
    assert (label.rationale, bool(label.winner)) == ("fine prose", True)
    assert len(label_rows(submitted.pair.campaign)) == rows_before


def test_it_refuses_a_too_short_rationale_on_a_submitted_pair_by_htmx(client, submitted, alice):
    client.force_login(alice)
    response = client.post(reverse("label-save", args=[submitted.pk, "n_1"]), {"rationale": "ok"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "Write a rationale of at least 5 characters (2 so far)." in response.content.decode()
    assert "n_1" not in response.content.decode()  # shown next to the criterion: no id to decode
    assert Label.objects.get(assignment=submitted, criterion__key="n_1").rationale == "fine prose"


def test_it_accepts_a_changed_winner_on_a_submitted_pair(submitted, alice):
    response = api(alice).put(reverse("api:label-save", args=[submitted.pk, "n_1"]), {"position": "2"}, format="json")
    assert response.status_code == 200
    submitted.refresh_from_db()
    assert submitted.status == Assignment.Status.SUBMITTED
    assert Label.objects.get(assignment=submitted, criterion__key="n_1").winner == ("b" if submitted.a_first else "a")


def test_it_keeps_the_overall_answer_of_a_submitted_pair(catalogue, alice):
    from annotate.services.answers import overall_save, overall_shown
    from annotate.services.campaigns import campaign_create

    campaign = campaign_create(
        name="Overall", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1, ask_overall=True, rationale_required=False
    )
    work = assignment_claim_next(campaign=campaign, user=alice)
    for criterion in Criterion.objects.filter(criterion_set=catalogue):
        label_save(assignment=work, criterion=criterion, user=alice, position="2")
    overall_save(assignment=work, user=alice, value="1")
    assignment_submit(assignment=work, user=alice)
    response = api(alice).put(reverse("api:overall-save", args=[work.pk]), {"overall": ""}, format="json")
    assert response.status_code == 400
    assert "submitted" in response.json()["errors"][0]
    work.refresh_from_db()
    assert overall_shown(work) == "1"
    # Changing the answer (rather than clearing it) is an amendment like any other.
    assert api(alice).put(reverse("api:overall-save", args=[work.pk]), {"overall": "both_bad"}, format="json").status_code == 200


def test_it_submits_a_pair_only_once(submitted, alice):
    from annotate.models import LabelChange

    assignment_submit(assignment=submitted, user=alice)
    assert LabelChange.objects.filter(assignment=submitted, field="status", new_value="submitted").count() == 1
