"""Big tables: the Markdown shows their first 50 rows, the HTML report collapses the rest, the dashboard pages
through them, and the JSON and a per-table CSV hold every row.

Twelve judges give 66 paired comparisons.
"""

import csv
import io
import itertools

import numpy as np
import pytest
from django.core.cache import cache
from django.urls import reverse

from calibration.metrics import LabelRow
from calibration.report.build import report_from_inputs
from calibration.report.formats import render, render_table_csv
from tests.calibration_builders import (
    ATLAS,
    QUILL,
    by_criterion,
    hand_dataset,
    judge_rows,
    offline_campaign,
    offline_inputs,
    pair_of,
    summary,
)
from tests.helpers import run

W = "wikipedia"
JUDGES = [f"judge-{k:02d}" for k in range(12)]


def many_judges_report() -> dict:
    rng = np.random.default_rng(5)
    rows = []
    for p in range(12):
        for c in ("c1", "c2"):
            rows.append(LabelRow(f"p{p}", c, "style", "human:ann", "human", W, ATLAS, str(rng.choice([W, ATLAS]))))
            for name in JUDGES:
                rows.append(LabelRow(f"p{p}", c, "style", name, "judge", W, ATLAS, str(rng.choice([W, ATLAS])), W))
    return report_from_inputs(offline_campaign(), offline_inputs(rows, [summary(n) for n in JUDGES]), rounds=50)


def section(md: str, title: str) -> str:
    return md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_it_shows_the_first_rows_in_markdown_and_collapses_the_rest_in_html():
    report = many_judges_report()
    assert len(report["comparisons"]) == 66
    md = render(report, "md")
    part = section(md, "Paired PAR differences")
    assert part.count("\n| judge-") == 50
    assert (
        "Rows 1–50 of 66 shown. Every row is in the JSON report; `calibration_report --format csv --table comparisons` writes this table whole."
        in part
    )
    html = render(report, "html")
    details = html.split('<h2 id="comparisons">')[1].split("<h2")[0]
    assert '<details class="more-rows">' in details and "16 more rows (66 in all)" in details
    assert details.count("<tr><td>judge-") == 66  # the standalone file keeps every row, the rest collapsed
    table = list(csv.reader(io.StringIO(render_table_csv(report, "comparisons"))))
    assert table[0][:2] == ["A", "B"] and len(table) == 67
    assert {(r[0], r[1]) for r in table[1:]} == {(c["a"], c["b"]) for c in report["comparisons"]}
    with pytest.raises(ValueError, match="unknown table 'nope'"):
        render_table_csv(report, "nope")


def test_it_keeps_a_small_table_whole():
    report = many_judges_report()
    md = render(report, "md")
    judges = section(md, "Judges against the humans")
    assert judges.count("\n| judge-") == 12 and "Rows 1–" not in judges


@pytest.fixture
def crowded(alice, bob):
    """The hand dataset and ten more judges: 12 judges, 66 comparisons."""
    cache.clear()
    campaign = hand_dataset(alice, bob)
    p1, p2 = pair_of(campaign, ATLAS), pair_of(campaign, QUILL)
    for k, sides in enumerate(itertools.islice(itertools.product("ab", repeat=3), 8)):
        judge_rows(campaign, f"extra-{k}", {(p1, True): by_criterion(*sides), (p2, True): by_criterion(*reversed(sides))})
    judge_rows(campaign, "extra-8", {(p1, True): by_criterion("a", "a", "a"), (p2, True): by_criterion("b", "b", "b")})
    judge_rows(campaign, "extra-9", {(p1, True): by_criterion("b", "a", "b"), (p2, True): by_criterion("a", "a", "b")})
    return campaign


@pytest.mark.django_db
def test_it_pages_through_a_big_table_on_the_dashboard(crowded, client, rachel, alice, settings):
    settings.CALIBRATION_ROUNDS = 20
    client.force_login(rachel)
    page = client.get(reverse("calibration-dashboard", args=[crowded.pk])).content.decode()
    comparisons = page.split('<section id="table-comparisons"')[1].split("</section>")[0]
    assert comparisons.count("<tr><td>") == 50 and "Rows 1–50 of 66" in comparisons
    table_url = reverse("calibration-table", args=[crowded.pk, "comparisons"])
    assert f'href="{table_url}?page=2"' in comparisons and f'hx-get="{table_url}?page=2"' in comparisons
    second = client.get(table_url, {"page": "2"})
    text = second.content.decode()
    assert (
        second.status_code == 200
        and "<html" in text
        and text.count("<tr><td>") == 16
        and "Rows 51–66 of 66" in text
        and "← previous" in text
    )
    fragment = client.get(table_url, {"page": "2"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and fragment.strip().startswith('<section id="table-comparisons"') and fragment.count("<tr><td>") == 16
    assert client.get(table_url, {"page": "x"}).status_code == 400
    assert client.get(reverse("calibration-table", args=[crowded.pk, "nope"])).status_code == 404
    assert client.post(table_url).status_code == 405
    whole = client.get(reverse("calibration-download", args=[crowded.pk, "csv"]), {"table": "comparisons"})
    assert whole.status_code == 200 and len(whole.content.decode().splitlines()) == 67
    assert whole["Content-Disposition"] == 'attachment; filename="calibration-Calib-comparisons.csv"'
    assert client.get(reverse("calibration-download", args=[crowded.pk, "md"]), {"table": "comparisons"}).status_code == 400
    client.force_login(alice)
    assert client.get(table_url).status_code == 403
    client.logout()
    assert client.get(table_url).status_code == 302


@pytest.mark.django_db
def test_it_writes_one_table_whole_from_the_command_line(crowded):
    result = run("calibration_report", "--campaign", crowded.name, "--rounds", "0", "--format", "csv", "--table", "comparisons")
    assert result.code == 0, result.err
    rows = list(csv.reader(io.StringIO(result.out)))
    assert (
        rows[0] == ["A", "B", "PAR(A) − PAR(B)", "Significant", "PAR(A) / PAR(B) on common labels", "Labels", "Pairs"] and len(rows) == 67
    )
    wrong_format = run("calibration_report", "--campaign", crowded.name, "--format", "md", "--table", "comparisons")
    assert wrong_format.code != 0 and "--table goes with --format csv" in wrong_format.err
    unknown = run("calibration_report", "--campaign", crowded.name, "--format", "csv", "--table", "nope")
    assert unknown.code != 0 and "unknown table 'nope' (choose judges, judge_work" in unknown.err
