import pytest
from django.urls import reverse

from annotate.models import Campaign, System
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db


def test_it_lists_campaigns_for_researchers(client, rachel, campaign):
    client.force_login(rachel)
    response = client.get(reverse("campaign-list"))
    assert response.status_code == 200 and b"Pilot" in response.content


def test_it_creates_a_campaign_from_the_web_form(client, rachel, catalogue, alice, bob):
    client.force_login(rachel)
    systems = System.objects.filter(key__in=["wikipedia", "quill_researcher"])
    response = client.post(
        reverse("campaign-new"),
        {
            "name": "Web",
            "criterion_set": catalogue.pk,
            "systems": [s.pk for s in systems],
            "topics": "2",
            "overlap": "2",
            "pair_mode": "reference",
            "rationale_required": "on",
            "rationale_min_length": "12",
            "annotators": [alice.pk, bob.pk],
            "claim_timeout_minutes": "60",
            "instructions": "Be *fair*.",
        },
    )
    campaign = Campaign.objects.get(name="Web")
    assert response.status_code == 302 and response["Location"] == reverse("campaign-detail", args=[campaign.pk])
    assert campaign.pairs.count() == 2 and campaign.rationale_min_length == 12
    assert "<em>fair</em>" in campaign.instructions_html


def test_it_shows_form_errors_and_creates_nothing(client, rachel, catalogue, alice):
    client.force_login(rachel)
    systems = System.objects.filter(key__in=["wikipedia"])
    response = client.post(
        reverse("campaign-new"),
        {
            "name": "Bad",
            "criterion_set": catalogue.pk,
            "systems": [s.pk for s in systems],
            "overlap": "3",
            "pair_mode": "reference",
            "rationale_min_length": "10",
            "annotators": [alice.pk],
            "claim_timeout_minutes": "60",
        },
    )
    assert response.status_code == 422
    assert b"Choose at least two systems." in response.content
    assert b"Overlap 3 needs at least 3 annotators" in response.content
    assert not Campaign.objects.filter(name="Bad").exists()


def test_it_refuses_an_unknown_protocol_from_the_web_form(client, rachel, catalogue):
    client.force_login(rachel)
    systems = System.objects.filter(key__in=["wikipedia", "quill_researcher"])
    fields = {"name": "Rated", "criterion_set": catalogue.pk, "systems": [s.pk for s in systems], "overlap": "1"}
    fields |= {"pair_mode": "reference", "rationale_min_length": "10", "claim_timeout_minutes": "60", "protocol": "no-such"}
    response = client.post(reverse("campaign-new"), fields)
    assert response.status_code == 422
    assert b"Select a valid choice. no-such is not one of the available choices." in response.content
    assert not Campaign.objects.filter(name="Rated").exists()
    response = client.post(reverse("campaign-new"), fields | {"protocol": "pairwise"})
    assert response.status_code == 302
    assert Campaign.objects.get(name="Rated").protocol == "pairwise"


def test_it_shows_progress_per_annotator_pair_and_criterion(client, rachel, alice, campaign, django_assert_max_num_queries):
    assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(rachel)
    # 15: the session, the user, the campaign, its pairs (submitted per pair, their count, one page),
    # its annotators, its criteria and their labels, the count of its readings (one article alone),
    # the design warning's four (its items other than pairs, by kind: none here, so no rubric read), and
    # its flagged pairs.
    with django_assert_max_num_queries(15):
        response = client.get(reverse("campaign-detail", args=[campaign.pk]))
    html = response.content.decode()
    assert "0 / 16" in html and "alice" in html and "ww_cc_1" in html


def test_it_closes_and_reopens_a_campaign(client, rachel, alice, campaign):
    client.force_login(rachel)
    client.post(reverse("campaign-toggle", args=[campaign.pk]), {"open": "0"})
    campaign.refresh_from_db()
    assert not campaign.is_open
    assert assignment_claim_next(campaign=campaign, user=alice) is None
    client.post(reverse("campaign-toggle", args=[campaign.pk]), {"open": "1"})
    campaign.refresh_from_db()
    assert campaign.is_open
    client.force_login(alice)
    assert client.post(reverse("campaign-toggle", args=[campaign.pk]), {"open": "0"}).status_code == 403


def test_it_gives_annotators_their_queue(client, alice, oscar, campaign):
    client.force_login(alice)
    home = client.get(reverse("home"))
    assert b"Start the next pair" in home.content
    response = client.post(reverse("claim-next", args=[campaign.pk]))
    assert response.status_code == 302 and "/work/" in response["Location"]
    assert b"Continue where you left off" in client.get(reverse("home")).content
    client.force_login(oscar)
    assert b"No annotation work is assigned to you yet" in client.get(reverse("home")).content
    assert client.post(reverse("claim-next", args=[campaign.pk])).status_code == 403
