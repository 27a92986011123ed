"""The adjudicated human reference (issue 26 item 5): `--human-reference adjudicated` takes the
adjudicator's final answer on each adjudicated item and the human labels elsewhere, states how many
items (and pairs) were adjudicated in every format, and a new decision refreshes a cached report."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from annotate.models import Adjudication
from annotate.services.adjudication import adjudication_open
from annotate.services.answers import adjudication_save
from calibration import selectors
from calibration.report import formats as report_formats
from calibration.report.build import build_report, report_cached
from judges.models import JudgeUnit, JudgeVerdict
from judges.services import judge_create, judge_run_create
from tests.helpers import run
from tests.test_adjudication import dana, disputed  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
ROUNDS = 20


@pytest.fixture
def judged(disputed, campaign):  # noqa: F811
    """A judge that answered A on the item alice (A) and bob (B) split on, in one order only."""
    judge, _ = judge_create(name="leaning-a", kind="length")
    run_ = judge_run_create(campaign=campaign, judge=judge)
    unit = JudgeUnit.objects.create(
        run=run_, judge=judge, pair=disputed["pair"], a_first=True, order="ab", category=disputed["split"].category, status="done"
    )
    JudgeVerdict.objects.create(unit=unit, criterion=disputed["split"], winner="a", rationale="A is better")
    return disputed


def decide(campaign, rachel, dana, criterion, side: str) -> Adjudication:  # noqa: F811
    adjudication_open(campaign=campaign, by=rachel, criteria=[criterion])
    item = Adjudication.objects.get(campaign=campaign, criterion=criterion)
    position = {"a": "1" if item.a_first else "2", "b": "2" if item.a_first else "1"}[side]
    return adjudication_save(adjudication=item, user=dana, position=position, reason="the sources say so")


def judge(report: dict, name: str = "leaning-a") -> dict:
    return next(j for j in report["judges"] if j["name"] == name)


def test_it_takes_the_adjudicated_answer_as_the_reference(judged, campaign, rachel, dana):  # noqa: F811
    majority = build_report(campaign, rounds=ROUNDS)
    # Split humans: the judge agrees with one of the two (PAR 1/2 on its one item).
    assert judge(majority)["par"] == pytest.approx(0.5)
    decide(campaign, rachel, dana, judged["split"], "a")
    adjudicated = build_report(campaign, rounds=ROUNDS, human_reference="adjudicated")
    assert judge(adjudicated)["par"] == pytest.approx(1.0) and judge(adjudicated)["n_items"] == 1
    assert adjudicated["human_reference"]["adjudicated"] == {"n_items": 1, "n_pairs": 1}
    assert "1 item adjudicated, on 1 pair." in adjudicated["human_reference"]["statement"]
    assert adjudicated["human_reference"]["statement"] in adjudicated["notes"]
    # The humans' own figures describe the annotators whatever the reference.
    assert adjudicated["humans"] == majority["humans"]


def test_it_measures_against_the_other_side_when_the_adjudicator_chose_it(judged, campaign, rachel, dana):  # noqa: F811
    decide(campaign, rachel, dana, judged["split"], "b")
    report = build_report(campaign, rounds=ROUNDS, human_reference="adjudicated")
    assert judge(report)["par"] == pytest.approx(0.0)


def test_it_is_the_majority_with_zero_adjudicated_before_any_decision(judged, campaign):
    majority = build_report(campaign, rounds=ROUNDS)
    report = build_report(campaign, rounds=ROUNDS, human_reference="adjudicated")
    assert report["human_reference"]["adjudicated"] == {"n_items": 0, "n_pairs": 0}
    assert "0 items adjudicated, on 0 pairs." in report["human_reference"]["statement"]
    assert judge(report)["par"] == judge(majority)["par"]
    names = [r["name"] for r in report["sensitivity"]["references"]]
    assert names[-1] == "adjudicated"  # asked for: listed even with none decided


def test_it_lists_adjudicated_in_the_sensitivity_only_once_an_item_is_decided(judged, campaign, rachel, dana):  # noqa: F811
    before = build_report(campaign, rounds=ROUNDS, sensitivity=True)
    assert "adjudicated" not in [r["name"] for r in before["sensitivity"]["references"]]
    decide(campaign, rachel, dana, judged["split"], "a")
    after = build_report(campaign, rounds=ROUNDS, sensitivity=True)
    refs = {r["name"]: r for r in after["sensitivity"]["references"]}
    assert "adjudicated" in refs and refs["adjudicated"]["note"].startswith("1 item adjudicated, on 1 pair;")
    row = next(j for j in after["sensitivity"]["judges"] if j["judge"] == "leaning-a")
    assert row["par"]["majority"]["value"] == pytest.approx(0.5) and row["par"]["adjudicated"]["value"] == pytest.approx(1.0)
    assert row["par"]["adjudicated"]["shift"] == pytest.approx(0.5)


def test_it_changes_the_stamp_and_refreshes_the_cached_report_on_a_decision(judged, campaign, rachel, dana, settings):  # noqa: F811
    settings.CALIBRATION_ROUNDS = ROUNDS
    adjudication_open(campaign=campaign, by=rachel, criteria=[judged["split"]])
    opened = selectors.calibration_stamp(campaign=campaign)
    cached = report_cached(campaign, human_reference="adjudicated")
    assert cached["human_reference"]["adjudicated"]["n_items"] == 0
    item = Adjudication.objects.get(campaign=campaign, criterion=judged["split"])
    adjudication_save(adjudication=item, user=dana, position="1", reason="the sources say so")
    decided = selectors.calibration_stamp(campaign=campaign)
    assert decided != opened and selectors.calibration_stamp(campaign=campaign) == decided
    fresh = report_cached(campaign, human_reference="adjudicated")
    assert fresh["human_reference"]["adjudicated"] == {"n_items": 1, "n_pairs": 1}


def test_it_states_the_number_adjudicated_in_every_format(judged, campaign, rachel, dana, client, settings):  # noqa: F811
    settings.CALIBRATION_ROUNDS = ROUNDS
    decide(campaign, rachel, dana, judged["split"], "a")
    said = "1 item adjudicated, on 1 pair"
    for fmt in ("md", "html"):
        out = run(
            "calibration_report", "--campaign", campaign.name, "--format", fmt, "--rounds", str(ROUNDS), "--human-reference", "adjudicated"
        )
        assert out.code == 0, out.err
        assert said in out.out, fmt
    rows = list(
        csv.DictReader(io.StringIO(report_formats.render(build_report(campaign, rounds=ROUNDS, human_reference="adjudicated"), "csv")))
    )
    assert rows and all((r["human_reference"], r["adjudicated_items"], r["adjudicated_pairs"]) == ("adjudicated", "1", "1") for r in rows)
    client.force_login(rachel)
    page = client.get(reverse("calibration-dashboard", args=[campaign.pk]), {"human_reference": "adjudicated"})
    assert page.status_code == 200
    text = page.content.decode()
    assert said in text and '<option value="adjudicated" selected>' in text
    for fmt in ("md", "html", "csv", "json"):
        response = client.get(reverse("calibration-download", args=[campaign.pk, fmt]), {"human_reference": "adjudicated"})
        assert response.status_code == 200, fmt
        body = response.content.decode()
        assert (said in body) if fmt in ("md", "html") else ("adjudicated" in body), fmt
    body = json.loads(client.get(reverse("calibration-download", args=[campaign.pk, "json"]), {"human_reference": "adjudicated"}).content)
    assert body["human_reference"]["adjudicated"] == {"n_items": 1, "n_pairs": 1}
    api = client.get(reverse("api-campaign-calibration", args=[campaign.pk]), {"human_reference": "adjudicated"})
    assert api.status_code == 200 and api.json()["human_reference"]["adjudicated"] == {"n_items": 1, "n_pairs": 1}
