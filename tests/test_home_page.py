"""GET /: an annotator's campaigns with what they submitted and how many pairs are left for them."""

import re

import pytest
from django.urls import reverse

from annotate.models import Criterion
from annotate.services.answers import label_save
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit

pytestmark = pytest.mark.django_db


def left(client) -> dict[str, str]:
    html = client.get(reverse("home")).content.decode()
    return dict(re.findall(r"<h2>([^<]+)</h2>\s*<p>(.*?)</p>", html, re.S))


def finish(assignment, user) -> None:
    for criterion in Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set):
        label_save(assignment=assignment, criterion=criterion, user=user, position="1", rationale="fine prose")
    assignment_submit(assignment=assignment, user=user)


def test_it_shows_the_pairs_left_for_each_annotator(client, campaign, alice, bob):
    client.force_login(alice)
    assert left(client) == {"Pilot": '0 pairs submitted. <strong class="pairs-left">8 pairs left for you.</strong>'}
    work = assignment_claim_next(campaign=campaign, user=alice)
    assert "8 pairs left for you." in left(client)["Pilot"]  # the pair in progress is one of them
    finish(work, alice)
    assert left(client)["Pilot"] == '1 pair submitted. <strong class="pairs-left">7 pairs left for you.</strong>'


def test_it_leaves_out_pairs_others_filled(client, catalogue, alice, bob):
    campaign = campaign_create(
        name="Single",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent"],
        overlap=1,
        annotators=[alice, bob],
        rationale_min_length=5,
    )
    client.force_login(alice)
    assert "4 pairs left for you." in left(client)["Single"]
    finish(assignment_claim_next(campaign=campaign, user=bob), bob)
    assignment_claim_next(campaign=campaign, user=bob)  # bob holds another one in progress
    assert "2 pairs left for you." in left(client)["Single"]
    client.force_login(bob)
    assert left(client)["Single"] == '1 pair submitted. <strong class="pairs-left">3 pairs left for you.</strong>'


def test_it_counts_no_repeats_where_the_campaign_forbids_them(client, catalogue, alice, bob):
    campaign = campaign_create(
        name="No repeats",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        overlap=1,
        annotators=[alice, bob],
        forbid_repeats=True,
        rationale_min_length=5,
    )
    client.force_login(alice)
    assert "4 pairs left for you." in left(client)["No repeats"]  # 8 pairs, but one per topic
    assignment_claim_next(campaign=campaign, user=alice)
    assert "4 pairs left for you." in left(client)["No repeats"]  # the one in progress and one on each other topic


def test_it_offers_no_start_button_when_nothing_is_left(client, catalogue, alice, bob):
    campaign = campaign_create(
        name="Tiny",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent"],
        overlap=1,
        annotators=[alice, bob],
        rationale_min_length=5,
    )
    client.force_login(alice)
    assert b"Start the next pair" in client.get(reverse("home")).content
    while work := assignment_claim_next(campaign=campaign, user=bob):
        finish(work, bob)
    html = client.get(reverse("home")).content.decode()
    assert "0 pairs left for you." in left(client)["Tiny"]
    assert "Start the next pair" not in html
    assert "Nothing is left for you to claim in this campaign now." in html


def test_it_shows_the_campaigns_median_time_per_pair_with_its_n_and_interval(client, campaign, alice, bob):
    from datetime import timedelta

    import numpy as np
    from scipy.stats import quantile_test

    from annotate.models import Assignment

    client.force_login(alice)
    assert "no estimate yet (fewer than 5 pairs" in client.get(reverse("home")).content.decode()
    minutes = [12, 30, 18, 45, 25, 22]
    for user, spent in zip([alice, bob] * 3, minutes):
        work = assignment_claim_next(campaign=campaign, user=user)
        finish(work, user)
        Assignment.objects.filter(pk=work.pk).update(first_opened_at=work.submitted_at - timedelta(minutes=spent))
    html = client.get(reverse("home")).content.decode()
    interval = quantile_test(np.array(minutes, dtype=float), p=0.5).confidence_interval(0.95)
    assert np.median(minutes) == 23.5  # shown rounded half up
    assert "Expected time per pair: about 24 min" in html
    assert "last 6 submitted pairs" in html
    assert f"95% CI {interval.low:.0f}–{interval.high:.0f} min" in html


def test_it_counts_pairs_and_single_articles_by_their_names(client, catalogue, alice):
    from tests.reading_campaigns import mixed_campaign

    mixed_campaign(name="Mixed", annotators=[alice], overlap=1)
    client.force_login(alice)

    html = client.get(reverse("home")).content.decode()

    # 2 topics: a pair and two readings (one article alone) each.
    assert '<strong class="pairs-left">2 pairs and 4 single articles left for you.</strong>' in html
    assert "Start the next pair" in html


def test_it_shows_the_display_name_and_never_the_internal_one(client, campaign, alice, rachel):
    client.force_login(rachel)
    form = {"display_name": "  Writing   study, spring ", "gold_rate": "0", "repeat_rate": "0", "reference_name": "Wikipedia"}
    assert client.post(reverse("campaign-settings", args=[campaign.pk]), form).status_code == 302
    client.force_login(alice)

    html = client.get(reverse("home")).content.decode()

    assert "<h2>Writing study, spring</h2>" in html
    assert "Pilot" not in html


def test_it_lists_only_the_campaigns_an_annotator_belongs_to(client, catalogue, campaign, alice, bob, oscar):
    unlisted = campaign_create(
        name="Unlisted", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], overlap=1, rationale_min_length=5
    )
    client.force_login(oscar)
    assert left(client) == {}  # on no list, with no work anywhere
    client.force_login(alice)
    assert list(left(client)) == ["Pilot"]  # her list's campaign, not the one made without a list

    assignment_claim_next(campaign=unlisted, user=oscar)  # open to every annotator's claims all the same
    client.force_login(oscar)
    assert list(left(client)) == ["Unlisted"]  # once he has work in it, it is his
