"""From a long-format labels file (human and judge rows) through import_labels to calibration_report in every format."""

import csv
import io
import json

import pytest

from interchange import JUDGE_COLUMNS, LABEL_COLUMNS
from tests.calibration_builders import ATLAS, CRITERIA, QUILL, WIKI, assert_contract, hand_campaign
from tests.helpers import run

pytestmark = pytest.mark.django_db

SAVED = "2026-03-01T10:00:00Z"
# The hand-made dataset of test_calibration_report, as rows: (rater, other system, A shown first, winners c1..c3 as sides).
HUMANS = [
    ("alice", ATLAS, True, "aab"),
    ("alice", QUILL, False, "abb"),
    ("bob", ATLAS, False, "abb"),
    ("bob", QUILL, True, "aba"),
]
JUDGES = [
    ("sharp", ATLAS, True, "aab"),
    ("sharp", QUILL, True, "abb"),
    ("cheap", ATLAS, True, "aaa"),
    ("cheap", QUILL, True, "aaa"),
    ("cheap", ATLAS, False, "aba"),
    ("cheap", QUILL, False, "baa"),
]


def labels_file(path, campaign_name: str) -> None:
    columns = LABEL_COLUMNS + JUDGE_COLUMNS
    rows = []
    for kind, entries in (("human", HUMANS), ("judge", JUDGES)):
        for rater, other, a_first, sides in entries:
            left, right = (WIKI, other) if a_first else (other, WIKI)
            for criterion, side in zip(CRITERIA, sides):
                winner = WIKI if side == "a" else other
                row = {
                    "campaign": campaign_name,
                    "topic": "Red Fox",
                    "criterion": criterion,
                    "rater_kind": kind,
                    "rater": rater,
                    "left_system": left,
                    "right_system": right,
                    "winner_system": winner,
                    "rationale": f"{rater} on {criterion}",
                    "started_at": "",
                    "saved_at": SAVED,
                }
                if kind == "judge":
                    row.update(model=f"{rater}-model", position="1" if winner == left else "2")
                rows.append(row)
    # sharp failed on the neutral category with atlas_agent shown first.
    rows.append(
        {
            "campaign": campaign_name,
            "topic": "Red Fox",
            "criterion": "c3",
            "rater_kind": "judge",
            "rater": "sharp",
            "left_system": ATLAS,
            "right_system": WIKI,
            "winner_system": "",
            "rationale": "",
            "started_at": "",
            "saved_at": SAVED,
            "model": "sharp-model",
            "error": "invalid JSON",
        }
    )
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)


def test_it_reports_on_imported_human_and_judge_labels(alice, bob, tmp_path):
    campaign = hand_campaign([alice, bob])
    labels = tmp_path / "labels.csv"
    labels_file(labels, campaign.name)
    imported = run("import_labels", str(labels), "--campaign", campaign.name)
    assert imported.code == 0, imported.err

    for fmt in ("json", "csv", "md", "html"):
        rounds = "200" if fmt == "json" else "50"
        result = run(
            "calibration_report", "--campaign", campaign.name, "--format", fmt, "--out", str(tmp_path / f"report.{fmt}"), "--rounds", rounds
        )
        assert result.code == 0, result.err
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert_contract(report)
    judges = {j["name"]: j for j in report["judges"]}
    assert set(judges) == {"sharp", "cheap"}
    # The same figures as the hand-made dataset built through the services.
    assert judges["sharp"]["par"] == pytest.approx(10 / 12, abs=1e-6) and judges["sharp"]["n_labels"] == 12
    assert judges["sharp"]["errors"] == 1 and judges["sharp"]["model"] == "sharp-model"
    assert judges["cheap"]["par"] == pytest.approx(3 / 12, abs=1e-6)
    assert judges["cheap"]["position_consistency"] == pytest.approx(4 / 6, abs=1e-6)
    assert report["humans"]["par_leave_one_out"] == pytest.approx(8 / 12, abs=1e-6)
    # Imported verdicts come without their cost: unknown (null), never $0, so no pick rests on cost.
    assert judges["sharp"]["cost_usd"] is None and judges["cheap"]["cost_usd"] is None
    assert report["recommended_judge"] == "sharp"  # the best PAR by its interval; its cost plays no part

    rows = list(csv.DictReader(io.StringIO((tmp_path / "report.csv").read_text(encoding="utf-8"))))
    assert [r["rater"] for r in rows] == ["sharp", "cheap", "humans"]
    assert report["recommendation"] in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<svg") == 3
