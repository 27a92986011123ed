"""The calibration dashboard and its downloads: who may see them, both browser branches, and the page's content."""

import json

import pytest
from django.core.cache import cache
from django.urls import reverse

from tests.calibration_builders import ATLAS, assert_contract, hand_campaign

pytestmark = pytest.mark.django_db
FORMATS = {"json": "application/json", "csv": "text/csv", "md": "text/markdown", "html": "text/html"}


@pytest.fixture(autouse=True)
def fast_reports(settings):
    settings.CALIBRATION_ROUNDS = 200
    cache.clear()


@pytest.fixture
def untouched(alice, bob):
    """A campaign with pairs but no labels or verdicts: quick to report on."""
    return hand_campaign([alice, bob], name="Untouched")


def dashboard(campaign) -> str:
    return reverse("calibration-dashboard", args=[campaign.pk])


def download(campaign, fmt: str) -> str:
    return reverse("calibration-download", args=[campaign.pk, fmt])


def test_it_shows_figures_charts_and_the_recommendation(client, rachel, calibration_campaign):
    client.force_login(rachel)
    response = client.get(dashboard(calibration_campaign))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Use sharp (cost $0.05)" in html
    assert "sharp (big-model)" in html and "0.833 [" in html and "(n=12)" in html and "†" in html
    assert "$0.05" in html and "$0.004" in html
    assert html.count("<svg") == 3 and 'id="par-cost-' in html and 'id="bt-' in html
    assert "Human ceiling" in html and "Krippendorff" in html and "Bradley–Terry" in html
    for fmt in FORMATS:
        assert f'href="{download(calibration_campaign, fmt)}"' in html
    # The disagreement browser opens on the first criterion: cheap's tie on pair 2 against the humans' wikipedia.
    assert '<div id="disagreements">' in html and "cheap: tie" in html
    assert 'hx-get="' + dashboard(calibration_campaign) + '"' in html


def test_it_says_so_when_nothing_is_labelled(client, rachel, untouched):
    client.force_login(rachel)
    html = client.get(dashboard(untouched)).content.decode()
    assert "No human labels yet in submitted assignments" in html
    assert "No recommendation: there are no human labels to calibrate against." in html


def test_it_browses_disagreements_without_javascript(client, rachel, calibration_campaign):
    client.force_login(rachel)
    response = client.get(dashboard(calibration_campaign), {"criterion": "c3", "judge": "cheap"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html and "<svg" in html
    assert '<option value="c3" selected>' in html and '<option value="cheap" selected>' in html
    assert f"Red Fox: wikipedia vs {ATLAS}" in html
    assert "alice: Clearer on this point." in html and "cheap says a: Clearer on this point." in html
    assert "1 pair where the humans split is left out" in html


def test_it_sends_only_the_fragment_to_htmx(client, rachel, calibration_campaign, django_assert_max_num_queries):
    client.force_login(rachel)
    client.get(dashboard(calibration_campaign))
    # Session, user, campaign, the change stamp (7: adjudicated answers and answers about one article
    # included), criteria, the browser's four queries and, since its answer is kept in the shared
    # database cache, the cache's own (look-up, lock, store: 15); no report is computed.
    with django_assert_max_num_queries(29):
        response = client.get(dashboard(calibration_campaign), {"criterion": "c3"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert html.strip().startswith('<div id="disagreements">') and "<html" not in html and "<svg" not in html
    assert "cheap: wikipedia" in html
    sharp_only = client.get(
        dashboard(calibration_campaign), {"criterion": "c3", "judge": "sharp"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert "No disagreement on this criterion." in sharp_only
    unknown = client.get(dashboard(calibration_campaign), {"criterion": "<b>zz"}, headers={"HX-Request": "true"}).content.decode()
    assert "No criterion '&lt;b&gt;zz' in this campaign's rubric." in unknown


def test_it_gives_the_full_page_when_htmx_restores_history(client, rachel, untouched):
    client.force_login(rachel)
    response = client.get(dashboard(untouched), headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<html" in response.content.decode()


def test_it_downloads_every_format(client, rachel, calibration_campaign):
    client.force_login(rachel)
    bodies = {}
    for fmt, content_type in FORMATS.items():
        response = client.get(download(calibration_campaign, fmt))
        assert response.status_code == 200
        assert response["Content-Type"] == f"{content_type}; charset=utf-8"
        assert response["Content-Disposition"] == f'attachment; filename="calibration-Calib.{fmt}"'
        bodies[fmt] = response.content.decode()
    report = json.loads(bodies["json"])
    assert_contract(report)
    assert report["parameters"]["rounds"] == 200
    assert bodies["csv"].startswith("rater,kind,model,")
    assert report["recommendation"] in bodies["md"]
    assert bodies["html"].count("<svg") == 3
    assert client.get(download(calibration_campaign, "pdf")).status_code == 404


def test_it_links_the_campaign_page_to_the_dashboard(client, rachel, untouched):
    client.force_login(rachel)
    html = client.get(reverse("campaign-detail", args=[untouched.pk])).content.decode()
    assert f'href="{dashboard(untouched)}"' in html
