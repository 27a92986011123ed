"""The JSON API for readings: a claim may give one; GET it, PUT its answers, submit it."""

import pytest
from rest_framework.test import APIClient

from annotate.models import Answer, Assignment, LabelChange, ReadingAssignment
from tests.reading_campaigns import ONE_ARTICLE, PAIRWISE, mixed_campaign, rubric
from tests.test_annotation_page import leaks

pytestmark = pytest.mark.django_db


@pytest.fixture
def reading_campaign(catalogue, alice, bob):
    return mixed_campaign(criterion_set=rubric("alone", ONE_ARTICLE), topics=1, annotators=[alice, bob])


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_it_claims_reads_answers_and_submits_a_reading(reading_campaign, alice):
    client = api(alice)
    claim = client.post(f"/api/campaigns/{reading_campaign.pk}/claim/")
    assert claim.status_code == 201 and claim.json()["kind"] == "reading"
    work = ReadingAssignment.objects.get(pk=claim.json()["id"])
    base = f"/api/assignments/{work.pk}/"
    page = client.get(base)
    assert page.status_code == 200
    body = page.json()
    assert [(row["key"], row["protocol"], row["choices"]) for row in body["criteria"]] == [
        ("ck_summary", "checklist", ["yes", "no", "na"]),
        ("rt_style", "rating", ["1", "2", "3", "4", "5"]),
    ]
    assert leaks(page.content.decode()) == []
    refused = client.put(base + "labels/rt_style/", {"value": "7"}, format="json")
    assert refused.status_code == 400 and refused.json() == {"errors": ["Choose a point from 1 to 5."]}
    missing = client.post(base + "submit/")
    assert missing.status_code == 400 and missing.json()["missing"][0] == "ck_summary: give an answer"
    for key, value in (("ck_summary", "na"), ("rt_style", "2")):
        saved = client.put(base + f"labels/{key}/", {"value": value, "rationale": "Checked it."}, format="json")
        assert saved.status_code == 200 and saved.json()["value"] == value and saved.json()["complete"]
    done = client.post(base + "submit/")
    assert done.status_code == 200 and done.json()["status"] == "submitted"
    assert dict(Answer.objects.filter(assignment=work).values_list("criterion__key", "value")) == {"ck_summary": "na", "rt_style": "2"}
    assert set(LabelChange.objects.filter(assignment=work).values_list("source", flat=True)) == {"api"}


def test_it_refuses_somebody_elses_reading(reading_campaign, alice, bob):
    claim = api(alice).post(f"/api/campaigns/{reading_campaign.pk}/claim/")
    base = f"/api/assignments/{claim.json()['id']}/"
    assert api(bob).get(base).status_code == 403
    assert api(bob).put(base + "labels/rt_style/", {"value": "3"}, format="json").status_code == 403
    assert APIClient().get(base).status_code == 403
    assert not Answer.objects.exists()


def test_it_takes_a_value_for_one_article_and_a_position_for_a_pair(catalogue, alice):
    campaign = mixed_campaign(criterion_set=rubric("mixed2", PAIRWISE, ONE_ARTICLE), topics=1, annotators=[alice])
    client = api(alice)
    kinds = {}
    while (claim := client.post(f"/api/campaigns/{campaign.pk}/claim/")).status_code in (200, 201):
        body = claim.json()
        kinds[body.get("kind", "pair")] = body["id"]
        Assignment.every.filter(pk=body["id"]).update(status="submitted")  # the next claim gives the next item
    assert set(kinds) == {"pair", "reading"}
    Assignment.every.filter(pk__in=kinds.values()).update(status="active")
    reading = client.put(f"/api/assignments/{kinds['reading']}/labels/ck_summary/", {"position": "1"}, format="json")
    assert reading.status_code == 400
    assert reading.json() == {"errors": ["This work is on one article alone: give `value`, not `position`."]}
    pair = client.put(f"/api/assignments/{kinds['pair']}/labels/pw_clear/", {"value": "yes"}, format="json")
    assert pair.status_code == 400 and pair.json() == {"errors": ["This work is on a pair: give `position`, not `value`."]}
    assert not LabelChange.objects.filter(criterion__isnull=False).exists()
    old = client.get(f"/api/readings/{kinds['reading']}/")  # the address of earlier releases
    assert old.status_code == 200 and old.json()["kind"] == "reading"
