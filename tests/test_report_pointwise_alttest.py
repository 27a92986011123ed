"""The one-article alt-test gets per-annotator and per-criterion tables in every format, and names
its unit as --alt-unit says (issue 39, item 11)."""

import csv

import pytest

from annotate.models import Campaign
from calibration.metrics import alttest
from calibration.metrics.alttest_wins import Ratings
from calibration.metrics.pointwise_powered import alt_test_long_form
from calibration.pointwise_selectors import pointwise_inputs
from calibration.report.build import build_report
from calibration.report.formats import render_html, render_md, render_table_csv
from tests.helpers import run
from tests.test_report_pointwise import synthetic_rows, write_csv

pytestmark = pytest.mark.django_db


@pytest.fixture
def arena(tmp_path):
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "a.csv", synthetic_rows(topics=18)))).code == 0
    return Campaign.objects.get(name="arena")


@pytest.mark.parametrize("unit", ["pair", "item"])
def test_it_shows_the_annotators_and_criteria_of_the_one_article_alt_test(arena, unit):
    report = build_report(arena, rounds=20, alt_epsilon=0.2, alt_epsilon_reason="crowd", alt_unit=unit)
    table = next(t for t in pointwise_inputs(campaign=arena).tables.items() if t[0][0] == "rating")[1]
    humans, own, scoring = alt_test_long_form(table, "close-judge")
    per = alttest.alt_test_by_criterion(Ratings(**humans), Ratings(**own), epsilon=0.2, scoring=scoring, rounds=20)
    pooled = alttest.alt_test(Ratings(**humans), Ratings(**own), epsilon=0.2, unit=unit, scoring=scoring, rounds=20)

    annotators = list(csv.reader(render_table_csv(report, "pointwise_alt_test_annotators").splitlines()))
    mine = [r for r in annotators[1:] if r[0] == "rating 1-5" and r[1] == "close-judge"]
    assert sorted(r[2] for r in mine) == sorted(str(a.annotator) for a in pooled.annotators) == ["ann_1", "ann_2", "ann_3"]
    assert {r[2]: r[3] for r in mine} == {str(a.annotator): f"{a.n:,}" for a in pooled.annotators}
    assert annotators[0][3] == ("Articles" if unit == "pair" else "Items")
    criteria = list(csv.reader(render_table_csv(report, "pointwise_alt_test_criteria").splitlines()))
    rows = {r[2]: r[3] for r in criteria[1:] if r[0] == "rating 1-5" and r[1] == "close-judge"}
    first = per.results[0]
    assert set(rows) == {"clarity"} and str(first.criterion) == "clarity"
    expected = ("passes" if first.passes else "fails") if first.ran else f"cannot run: {first.reason}"
    assert rows["clarity"] == expected

    markdown, html = render_md(report), render_html(report, svgs={})
    for title in ("One-article answers: alt-test per annotator (pooled)", "One-article answers: alt-test per criterion"):
        assert f"## {title}" in markdown and title in html
    sentence = "unit: the article, its criteria pooled (--alt-unit pair)" if unit == "pair" else "unit: the item (article × criterion)"
    assert sentence in markdown
    if unit == "item":
        assert "unit: the article." not in markdown
