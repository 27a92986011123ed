"""The Bradley–Terry leaderboard chart draws at most CHART_MAX_JUDGES judges: the humans, the judges
tied for the best PAR, then the highest PAR; the table keeps every rater."""

from calibration import charts
from calibration.report.formats import render
from tests.test_report_category_intervals import report_for


def judge_names(n: int) -> list[str]:
    return [f"judge-{j:02d}.v1.5" for j in range(n)]


def test_it_draws_every_judge_up_to_the_limit():
    report = report_for(charts.CHART_MAX_JUDGES)
    svg = charts.report_charts(report)["bradley_terry"]
    assert all(name in svg for name in judge_names(charts.CHART_MAX_JUDGES))
    assert "Bradley–Terry leaderboard for the humans and each judge" in svg and "judges tied for best" not in svg


def test_it_draws_the_humans_and_the_best_judges_above_the_limit_and_says_so():
    n = charts.CHART_MAX_JUDGES + 5
    report = report_for(n)
    svg = charts.bradley_terry_chart(report)
    order = [j["name"] for j in report["judges"]]  # highest PAR first
    drawn = [name for name in judge_names(n) if name in svg]
    expected = list(dict.fromkeys([*report["tied_for_best"], *order]))[: charts.CHART_MAX_JUDGES]
    assert sorted(drawn) == sorted(expected)
    assert set(report["tied_for_best"]) <= set(drawn)
    assert f"{charts.CHART_MAX_JUDGES} of {n} judges" in svg and "the other 5: the Bradley–Terry table" in svg
    assert "humans" in svg
    # the table of every format keeps them all
    for fmt in ("md", "html"):
        assert all(name in render(report, fmt) for name in judge_names(n)), fmt


def test_it_puts_a_tied_judge_of_lower_par_before_the_others():
    report = report_for(charts.CHART_MAX_JUDGES + 3)
    last = report["judges"][-1]["name"]
    report = {**report, "tied_for_best": [report["judges"][0]["name"], last]}
    raters, left_out = charts.charted_raters(report)
    names = [name for name, _ in raters]
    assert last in names and left_out == 3 and len(names) == 1 + charts.CHART_MAX_JUDGES
    assert names[0] == "humans" and names[1:] == [n for n in report["bradley_terry"] if n in names and n != "humans"]
