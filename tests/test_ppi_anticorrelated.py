"""A judge whose verdicts correlate exactly -1 with the humans' on one system's labelled pairs (issue 22,
item 2): seven rows of a labels file through the real commands and the real pages. Before the fix, the
prediction-powered gate divided by 1 - r^2 = 0 and every calibration page, download and command failed."""

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Campaign
from calibration.report.formats import FORMATS
from tests.helpers import RUBRIC, run
from tests.test_labels_only import COLUMNS, write_csv

pytestmark = pytest.mark.django_db

LEFT, RIGHT = "gpt-4.1", "qwen2.5-72b"
JUDGE = "contrarian.v2"


def seven_rows() -> list[dict]:
    """Three battles with a human vote and the judge's opposite verdict, and one battle judged only."""
    common = {"campaign": "anti", "left_system": LEFT, "right_system": RIGHT, "criterion": "ww_cc_1"}
    rows = []
    for k, human in enumerate((LEFT, RIGHT, LEFT)):
        topic = {"topic": f"Frage {k}: Größe"}
        judge = RIGHT if human == LEFT else LEFT
        rows.append(
            {**common, **topic, "rater_kind": "human", "rater": "crowd.1", "winner_system": human, "saved_at": "2025-03-01T10:00:00Z"}
        )
        rows.append({**common, **topic, "rater_kind": "judge", "rater": JUDGE, "winner_system": judge, "model": "vendor/contrarian"})
    rows.append(
        {**common, "topic": "Frage 3: Größe", "rater_kind": "judge", "rater": JUDGE, "winner_system": LEFT, "model": "vendor/contrarian"}
    )
    return rows


@pytest.fixture
def anti(tmp_path) -> Campaign:
    criteria = tmp_path / "tiny.json"
    criteria.write_text(json.dumps(RUBRIC), encoding="utf-8")
    assert run("import_criteria", str(criteria)).code == 0
    assert run("create_campaign", "--name", "anti", "--criteria", "tiny", "--labels-only").code == 0
    rows = seven_rows()
    assert len(rows) == 7
    result = run("import_labels", "--campaign", "anti", str(write_csv(tmp_path / "anti.csv", rows, COLUMNS)))
    assert result.code == 0, result.err
    return Campaign.objects.get(name="anti")


def test_it_reports_on_a_judge_that_contradicts_the_humans(anti, tmp_path):
    out = tmp_path / "report.json"
    result = run("calibration_report", "--campaign", "anti", "--rounds", "50", "--out", str(out))
    assert result.code == 0, result.err
    figures = json.loads(out.read_text(encoding="utf-8"))["prediction_powered"]["judges"][JUDGE]
    assert (figures["n_human_pairs"], figures["n_unlabelled_pairs"]) == (3, 1)
    for system in (LEFT, RIGHT):
        rate = figures["win_rates"][system]
        # an anti-correlated judge gets no weight: the figures are the humans' own
        assert rate["lam"] == 0 and rate["ppi"] == rate["human"]
        # 3 labelled pairs: too few for an interval, as everywhere in the report.
        assert rate["ppi"]["ci"] is None and rate["ppi"]["ci_note"] == "too few pairs for an interval"
        assert 0 <= rate["ppi"]["rate"] <= 1
    for fmt in ("md", "csv", "html"):
        assert (
            run("calibration_report", "--campaign", "anti", "--rounds", "0", "--format", fmt, "--out", str(tmp_path / f"r.{fmt}")).code == 0
        )


def test_it_plans_for_a_judge_that_contradicts_the_humans(anti):
    result = run("plan_labels", "--campaign", "anti", "--format", "json")
    assert result.code == 0, result.err
    plan = json.loads(result.out)
    assert plan["n_labelled_pairs"] == 3 and [e["judge"] for e in plan["scores"]] == [JUDGE]
    assert plan["par"][0]["par"] == 0  # it never agrees
    assert run("plan_labels", "--campaign", "anti").code == 0


def test_it_serves_the_dashboard_downloads_and_planner_for_it(anti, client, rachel):
    client.force_login(rachel)
    assert client.get(reverse("calibration-dashboard", args=[anti.pk])).status_code == 200
    for fmt in FORMATS:
        assert client.get(reverse("calibration-download", args=[anti.pk, fmt])).status_code == 200, fmt
    assert client.get(reverse("calibration-plan", args=[anti.pk])).status_code == 200
    assert client.get(reverse("calibration-plan", args=[anti.pk]), HTTP_HX_REQUEST="true").status_code == 200
    api = APIClient()
    api.force_login(rachel)
    assert api.get(reverse("api:campaign-plan", args=[anti.pk])).status_code == 200
    assert api.get(reverse("api-campaign-calibration", args=[anti.pk])).status_code == 200
