"""`calibration_report --swap-policy tie|half|both --unparsable drop|wrong`, and the same on the dashboard and
the API: a paper's own convention, stated in every format, the default unchanged.

On the hand dataset (tests/calibration_builders.py; two annotators, 12 labels):

    criterion        c1 c2 c3 | c1 c2 c3
    alice             a  a  b |  a  b  b
    bob               a  b  b |  a  b  a
    cheap, A first    a  a  a |  a  a  a
    cheap, B first    a  b  a |  b  a  a
    sharp, A first    a  a  b |  a  b  b    (its B-first unit on pair 1's neutral criterion c3 failed)

cheap, tie (merged a tie a | tie a a): 3 of 12 labels. half: pair 1 c1 2, c2 ½+½, c3 0; pair 2 c1 ½+½,
c2 0, c3 1 (bob) -> 5 of 12. both: the disagreeing orders are wrong; no human said tie -> 3 of 12.
sharp, drop: 10 of 12. wrong: pair 1 c3 (b | failed) is wrong under tie and both (8 of 12), half right
under half (alice ½, bob ½: 9 of 12).
"""

import csv
import html as html_lib
import io
import json

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from calibration.report.build import build_report
from tests.calibration_builders import assert_contract
from tests.helpers import run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_reports(settings):
    settings.CALIBRATION_ROUNDS = 50
    cache.clear()


def par(report: dict, name: str) -> tuple[float, int]:
    j = next(j for j in report["judges"] if j["name"] == name)
    return j["par"], j["n_labels"]


@pytest.mark.parametrize(
    "swap_policy, unparsable, cheap, sharp",
    [
        ("tie", "drop", 3 / 12, 10 / 12),
        ("half", "drop", 5 / 12, 10 / 12),
        ("both", "drop", 3 / 12, 10 / 12),
        ("tie", "wrong", 3 / 12, 8 / 12),
        ("half", "wrong", 5 / 12, 9 / 12),
        ("both", "wrong", 3 / 12, 8 / 12),
    ],
)
def test_it_counts_the_orders_and_the_failures_as_the_convention_says(calibration_campaign, swap_policy, unparsable, cheap, sharp):
    report = build_report(calibration_campaign, rounds=0, swap_policy=swap_policy, unparsable=unparsable)
    assert_contract(report)
    assert par(report, "cheap") == (pytest.approx(cheap, abs=1e-6), 12)
    assert par(report, "sharp") == (pytest.approx(sharp, abs=1e-6), 12)
    assert next(j for j in report["judges"] if j["name"] == "sharp")["n_unparsable"] == 1  # c3 of pair 1, B first
    assert (report["parameters"]["swap_policy"], report["parameters"]["unparsable"]) == (swap_policy, unparsable)


def test_it_keeps_the_default_as_it_was(calibration_campaign):
    default = build_report(calibration_campaign, rounds=60)
    explicit = build_report(calibration_campaign, rounds=60, swap_policy="tie", unparsable="drop")
    default.pop("generated_at"), explicit.pop("generated_at")
    assert default == explicit
    assert default["parameters"]["convention"].startswith(
        "an item judged in both orders counts once: the verdict both orders agree on, else a tie"
    )


def test_it_states_the_convention_in_every_format_from_the_command_line(calibration_campaign, tmp_path):
    args = (
        "calibration_report",
        "--campaign",
        calibration_campaign.name,
        "--rounds",
        "0",
        "--swap-policy",
        "half",
        "--unparsable",
        "wrong",
    )
    outputs = {}
    for fmt in ("json", "csv", "md", "html"):
        out = tmp_path / f"report.{fmt}"
        result = run(*args, "--format", fmt, "--out", str(out))
        assert result.code == 0, result.err
        outputs[fmt] = out.read_text(encoding="utf-8")
    report = json.loads(outputs["json"])
    assert par(report, "cheap")[0] == pytest.approx(5 / 12, abs=1e-6)
    convention = report["parameters"]["convention"]
    assert "each order as half a verdict" in convention and "count as wrong" in convention
    rows = list(csv.DictReader(io.StringIO(outputs["csv"])))
    assert {(r["swap_policy"], r["unparsable"]) for r in rows} == {("half", "wrong")}
    assert next(r for r in rows if r["rater"] == "sharp")["n_unparsable"] == "1"
    for fmt in ("md", "html"):
        text = html_lib.unescape(outputs[fmt])
        assert f"Convention (half, unparsable wrong): {convention}" in text, fmt
    bad = run("calibration_report", "--campaign", calibration_campaign.name, "--swap-policy", "mean")
    assert bad.code != 0 and "invalid choice: 'mean'" in bad.err


def test_it_offers_the_convention_on_the_dashboard_and_its_downloads(calibration_campaign, client, rachel):
    client.force_login(rachel)
    url = reverse("calibration-dashboard", args=[calibration_campaign.pk])
    page = client.get(url, {"swap_policy": "half", "unparsable": "wrong"})
    html = html_lib.unescape(page.content.decode())
    assert page.status_code == 200 and "Convention (half, unparsable wrong)" in html
    assert '<option value="half" selected>' in html and "0.417" in html  # cheap, half
    assert "report.json?swap_policy=half&unparsable=wrong" in html
    download = client.get(
        reverse("calibration-download", args=[calibration_campaign.pk, "json"]), {"swap_policy": "half", "unparsable": "wrong"}
    )
    assert download.status_code == 200 and json.loads(download.content)["parameters"]["swap_policy"] == "half"
    plain = html_lib.unescape(client.get(url).content.decode())
    assert "Convention (tie, unparsable drop)" in plain and 'report.json"' in plain  # the default adds nothing to the links
    bad = client.get(url, {"swap_policy": "mean"})
    assert bad.status_code == 400 and "unknown swap policy 'mean'" in html_lib.unescape(bad.content.decode())  # the whole page


def test_it_offers_the_convention_on_the_api(calibration_campaign, rachel):
    client = APIClient()
    client.force_login(rachel)
    url = reverse("api-campaign-calibration", args=[calibration_campaign.pk])
    report = client.get(url, {"swap_policy": "both", "unparsable": "wrong"}).json()
    assert (report["parameters"]["swap_policy"], report["parameters"]["unparsable"]) == ("both", "wrong")
    assert par(report, "sharp")[0] == pytest.approx(8 / 12, abs=1e-6)
    assert client.get(url).json()["parameters"]["swap_policy"] == "tie"
    bad = client.get(url, {"unparsable": "skip"})
    assert bad.status_code == 400 and "unknown unparsable policy 'skip'" in bad.json()["detail"]
