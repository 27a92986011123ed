"""GET /api/campaigns/<id>/calibration/: the report as JSON, for researchers only."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.calibration_builders import assert_contract, hand_campaign, hand_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_reports(settings):
    settings.CALIBRATION_ROUNDS = 200
    cache.clear()


def url(campaign) -> str:
    return reverse("api-campaign-calibration", args=[campaign.pk])


def test_it_gives_researchers_the_report(alice, bob, rachel):
    campaign = hand_dataset(alice, bob)
    client = APIClient()
    client.force_login(rachel)
    response = client.get(url(campaign), {"format": "json"})
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    report = response.json()
    assert_contract(report)
    assert report["campaign"]["id"] == campaign.pk and report["recommended_judge"] == "sharp"
    with CaptureQueriesContext(connection) as again:
        second = client.get(url(campaign))
    assert second.status_code == 200 and second.json() == report
    cache.clear()
    with CaptureQueriesContext(connection) as uncached:
        assert client.get(url(campaign)).status_code == 200
    assert len(again) < len(uncached)  # the second answer came from the cache


def test_it_accepts_a_researchers_token(alice, bob, rachel):
    campaign = hand_campaign([alice, bob])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=rachel).key}")
    assert client.get(url(campaign)).status_code == 200
