"""The label planner on the web: its page, the dashboard panel's fragment (htmx), and the API. Who may
see it, both browser branches, bad parameters answered with a message, and the panel following the
labels as they arrive."""

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Assignment, Criterion
from annotate.services.answers import label_save, position_from_winner
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from tests.calibration_builders import ATLAS, QUILL, by_criterion, hand_campaign, judge_rows, pair_of

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    settings.CALIBRATION_ROUNDS = 0
    cache.clear()


@pytest.fixture
def in_progress(alice, bob):
    """Three topics (six pairs); a judge with a dotted name has judged every pair, alice has labelled two."""
    campaign = hand_campaign([alice, bob], name="Halfway", topics=("Red Fox", "Grey Wolf", "Brown Bear"))
    verdicts = {}
    for topic in ("Red Fox", "Grey Wolf", "Brown Bear"):
        verdicts[(pair_of(campaign, ATLAS, topic), True)] = by_criterion("a", "a", "b")
        verdicts[(pair_of(campaign, QUILL, topic), True)] = by_criterion("b", "a", "b")
    judge_rows(campaign, "gpt-4.1-mini", verdicts, model="gpt-4.1-mini")
    return campaign


def plan_url(campaign) -> str:
    return reverse("calibration-plan", args=[campaign.pk])


def label_next(campaign, user, count: int) -> None:
    """`count` more pairs labelled and submitted by `user`, in the order the scheduler hands them out."""
    for _ in range(count):
        assignment = assignment_claim_next(campaign=campaign, user=user)
        for criterion in Criterion.objects.filter(criterion_set=campaign.criterion_set):
            position = position_from_winner(assignment, "a" if criterion.key == "c1" else "b")
            label_save(assignment=assignment, criterion=criterion, user=user, position=position, rationale="Clearer on this point.")
        assignment_submit(assignment=Assignment.objects.get(pk=assignment.pk), user=user)


def test_it_serves_the_page_without_javascript_and_the_fragment_to_htmx(client, in_progress, alice, rachel):
    label_next(in_progress, alice, 2)
    client.force_login(rachel)
    page = client.get(plan_url(in_progress), {"target": "0.05", "batch": "2"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "<html" in html and 'id="planner"' in html and "gpt-4.1-mini" in html
    assert "2 of 6 pairs have human labels" in html and 'value="0.05"' in html
    fragment = client.get(plan_url(in_progress), {"target": "0.05", "batch": "2"}, **HTMX)
    assert fragment.status_code == 200
    body = fragment.content.decode()
    assert "<html" not in body and body.lstrip().startswith('<section id="planner"')
    assert 'hx-trigger="every 60s"' in body and "target=0.05" in body  # it keeps polling with the same parameters
    assert "Future pairs resemble the labelled ones" in body


def test_it_answers_bad_parameters_with_a_message(client, in_progress, rachel):
    client.force_login(rachel)
    for params, message in (
        ({"target": "wide"}, "target must be a number, not &#x27;wide&#x27;"),
        ({"target": "0.7"}, "half-width must lie between 0 and 0.5"),
        ({"power": "1.5"}, "power must lie between 0 and 1"),
        ({"batch": "2.5"}, "batch must be a whole number"),
        ({"batch": "0"}, "batch must be 1 pair or more"),
        ({"target": "nan"}, "target must be a number"),
        ({"judge": "gpt-5"}, "no judge named &#x27;gpt-5&#x27;"),
    ):
        page = client.get(plan_url(in_progress), params)
        assert page.status_code == 400 and message in page.content.decode(), params
        fragment = client.get(plan_url(in_progress), params, **HTMX)
        assert fragment.status_code == 422 and message in fragment.content.decode(), params


def test_it_follows_the_labels_as_they_arrive(client, in_progress, alice, rachel):
    client.force_login(rachel)
    before = client.get(plan_url(in_progress), **HTMX).content.decode()
    assert "0 of 6 pairs have human labels" in before and "No human labels yet" in before
    label_next(in_progress, alice, 3)
    after = client.get(plan_url(in_progress), **HTMX).content.decode()
    assert "3 of 6 pairs have human labels" in after and "No human labels yet" not in after


def test_it_puts_a_panel_on_the_dashboard_that_loads_the_planner(client, in_progress, rachel):
    client.force_login(rachel)
    html = client.get(reverse("calibration-dashboard", args=[in_progress.pk])).content.decode()
    assert f'hx-get="{plan_url(in_progress)}"' in html and 'hx-trigger="load"' in html
    assert f'href="{plan_url(in_progress)}"' in html  # without JavaScript: a link


def test_it_gives_the_plan_over_the_api(in_progress, alice, rachel):
    label_next(in_progress, alice, 2)
    url = reverse("api:campaign-plan", args=[in_progress.pk])
    client = APIClient()
    client.force_login(rachel)
    response = client.get(url, {"judge": "gpt-4.1-mini", "target": "0.1", "power": "0.9", "batch": "3"})
    assert response.status_code == 200
    plan = response.json()
    assert (plan["n_pairs"], plan["n_labelled_pairs"], plan["target_halfwidth"], plan["power"], plan["batch"]) == (6, 2, 0.1, 0.9, 3)
    assert [p["judge"] for p in plan["par"]] == ["gpt-4.1-mini"]
    bad = client.get(url, {"power": "high"})
    assert bad.status_code == 400 and bad.json() == {"detail": "power must be a number, not 'high'"}
    assert client.post(url).status_code == 405
