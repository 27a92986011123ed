"""One unparsable judge answer marks that criterion alone (issue 39, item 4).

Criteria created from a labels file all fall into one category; before, a judge's error row on one
criterion put the whole (article, category) unit in error and its other answers left every figure.
The import's output and the report now count, per judge, the answers used and those given as
errors, with the reason.
"""

import pytest

from annotate.models import Campaign
from calibration.report.build import build_report
from calibration.report.formats import render_table_csv
from judges.models import Judge, JudgeUnit
from tests.helpers import run
from tests.test_report_pointwise import synthetic_rows, write_csv

pytestmark = pytest.mark.django_db


def _with_errors(rows):
    """The coin judge fails on `errors` for every article of the first four topics, twice for a timeout."""
    out = []
    for row in rows:
        if row["rater"] == "coin-judge" and row["criterion"] == "errors" and int(row["topic"].split()[-1]) < 4:
            reason = "timed out" if row["topic"].endswith("00") else "unparsable: no number in 'lots of them'"
            row = {**row, "answer": "", "error": reason}
        out.append(row)
    return out


def test_it_keeps_a_judges_other_answers_beside_an_error(tmp_path):
    rows = _with_errors(synthetic_rows(topics=12))
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "answers.csv", rows)))
    assert result.code == 0, result.err
    # 12 topics x 2 systems x 3 criteria; 4 topics x 2 systems fail on one criterion
    assert (
        "judge coin-judge: 64 answers imported, 8 stored as errors (6 'unparsable: no number in 'lots of them'', 2 'timed out')"
        in result.out
    )
    assert "judge close-judge: 72 answers imported, 0 stored as errors" in result.out

    coin = Judge.objects.get(name="coin-judge")
    assert coin.mode == Judge.Mode.CRITERION
    errors = JudgeUnit.objects.filter(judge=coin, status=JudgeUnit.Status.ERROR)
    assert errors.count() == 8 and set(errors.values_list("criterion__key", flat=True)) == {"errors"}

    report = build_report(Campaign.objects.get(name="arena"), rounds=0)
    tables = {t["response"]: t for t in report["pointwise"]["tables"]}
    # The checklist and the rating of the failing articles are still the coin judge's: 24 articles each.
    for response in ("binary", "rating"):
        assert tables[response]["judges"]["coin-judge"]["figures"]["figures"]["mean"]["n"] == 24, response
    assert tables["count"]["judges"]["coin-judge"]["figures"]["figures"]["mean"]["n"] == 16
    assert report["pointwise"]["judge_answers"]["coin-judge"] == {
        "answers": 64,
        "errors": 8,
        "reasons": {"timed out": 2, "unparsable: no number in 'lots of them'": 6},
    }
    assert render_table_csv(report, "pointwise_judges").count("coin-judge") > 0
    markdown_note = report_note(report)
    assert "coin-judge 64 used, 8 errors (6 'unparsable: no number in 'lots of them'', 2 'timed out')" in markdown_note
    assert "close-judge 72 used, 0 errors" in markdown_note


def report_note(report) -> str:
    from calibration.report.formats import tables

    return tables(report)["pointwise_judges"].note


def test_it_counts_a_judges_rows_refused_as_bad(tmp_path):
    rows = synthetic_rows(topics=4)
    rows[-1] = {**rows[-1], "answer": "seven"}  # the coin judge's count on the last article: not a number
    assert rows[-1]["rater"] == "coin-judge"
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    result = run("import_labels", "--campaign", "arena", "--skip-bad", str(write_csv(tmp_path / "answers.csv", rows)))
    assert result.code == 2 and "1 bad row(s) skipped (listed above); the rest was imported" in result.err
    assert "answers.csv:121: answer 'seven' is not a count from 0 to 100000" in result.err
    assert "judge coin-judge: 23 answers imported, 0 stored as errors, 1 row refused as bad (listed above)" in result.out
