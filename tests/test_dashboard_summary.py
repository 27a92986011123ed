"""The dashboard's summary, table of contents and collapsible sections (issue 41, item 7)."""

import html
import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from calibration.report import build as reports
from calibration.report.build import build_report
from calibration.report.summary import BASELINE_KINDS, SECTIONS, dashboard_summary

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_reports(settings):
    settings.CALIBRATION_ROUNDS = 50
    cache.clear()


def test_it_names_the_same_baselines_as_the_report():
    assert BASELINE_KINDS == reports.BASELINE_KINDS


def test_it_holds_the_best_judges_against_the_human_ceiling(calibration_campaign):
    summary = dashboard_summary(build_report(calibration_campaign, rounds=50, seed=1))

    # The hand dataset (tests/calibration_builders.py): humans' leave-one-out PAR 4/6, sharp 5/6, cheap 1/4, on 12 labels.
    assert summary["ceiling"]["value"] == pytest.approx(2 / 3, abs=1e-6) and summary["ceiling"]["n"] == 12
    assert [(j["name"], j["against"]) for j in summary["best"]] == [("sharp", "reaches"), ("cheap", "below")]
    assert summary["best"][0]["difference"] == pytest.approx(5 / 6 - 2 / 3, abs=1e-3)
    assert summary["cost"]["total_usd"] == pytest.approx(0.108) and summary["cost"]["judges_priced"] == 2
    # Two pairs only: the ceiling's interval is withheld, and the summary says so.
    assert any("The human ceiling has no interval" in w for w in summary["warnings"])


def test_it_leaves_baselines_out_and_says_when_there_is_no_ceiling():
    report = {
        "humans": {"par_leave_one_out": None},
        "judges": [
            {"name": "length", "kind": "length", "par": 0.9, "cost_usd": None},
            {"name": "gpt", "kind": "llm", "par": 0.7, "par_ci": [0.6, 0.8], "n_labels": 40, "cost_usd": None},
        ],
        "plan": {"frozen": True, "deviations": [{"what": "alt-test ε"}]},
    }

    summary = dashboard_summary(report)

    assert [j["name"] for j in summary["best"]] == ["gpt"] and summary["best"][0]["against"] is None
    assert summary["cost"]["total_usd"] is None and summary["cost"]["judges_unpriced"] == ["gpt"]
    assert "No human ceiling: it needs items labelled by at least two annotators." in summary["warnings"]
    assert "1 deviation from the frozen study plan: alt-test ε." in summary["warnings"]


def test_it_counts_a_judge_whose_interval_meets_the_ceilings_as_overlapping():
    report = {
        "humans": {"par_leave_one_out": 0.8, "par_leave_one_out_ci": [0.7, 0.9]},
        "judges": [{"name": "j", "kind": "llm", "par": 0.72, "par_ci": [0.65, 0.75], "cost_usd": 1.0}],
    }

    assert dashboard_summary(report)["best"][0]["against"] == "overlaps"


def test_it_shows_the_summary_and_a_table_of_contents_on_top(client, rachel, calibration_campaign):
    client.force_login(rachel)

    response = client.get(reverse("calibration-dashboard", args=[calibration_campaign.pk]))

    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    summary, toc, convention = page.index('id="summary"'), page.index('id="toc"'), page.index('id="convention-form"')
    assert summary < toc < convention < page.index('id="section-judges"')
    assert "Human ceiling" in page and "<strong>0.667</strong> (no CI" in page
    assert re.search(r"<td>sharp</td><td class=\"num\">0.833</td>.*?reaches it \(\+0.167\)", page, re.S)
    assert "$0.108 spent by 2 judges" in page
    # Every section of the page is in the table of contents, and every table link lands on a table.
    sections = re.findall(r'<details class="report-section card" id="(section-[a-z_]+)"', page)
    assert sections and all(f'href="#{key}"' in page for key in sections)
    for key in re.findall(r'<a href="#(table-[a-z_]+)">', page):
        assert f'id="{key}"' in page
    assert '<details class="report-section card" id="section-judges" open>' in page
    assert '<details class="report-section card" id="section-rankings">' in page


def test_it_lists_its_sections_once_each():
    keys = [name for _, _, _, names in SECTIONS for name in names]
    assert len(keys) == len(set(keys))
