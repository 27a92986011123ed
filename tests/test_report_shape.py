"""A campaign of one-article answers reads as what it holds (issue 39, item 10): its Markdown report
opens with the one-article tables, the pairwise tables (empty there) are left out and listed in one
line, and the command's summary counts its answers and judges rather than "0 human labels, 0 judges"."""

import pytest

from tests.helpers import run
from tests.test_report_pointwise import synthetic_rows, write_csv

pytestmark = pytest.mark.django_db


def test_it_opens_a_one_article_campaign_with_its_section(tmp_path):
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    assert run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "a.csv", synthetic_rows(topics=6)))).code == 0
    result = run("calibration_report", "--campaign", "arena", "--rounds", "20", "--format", "md")
    assert result.code == 0, result.err
    assert "arena: 180 one-article answers, 2 judges (no pairs)" in result.err
    headings = [line for line in result.out.splitlines() if line.startswith("## ")]
    assert headings[0] == "## One-article answers: judges against the humans"
    assert "Nothing to show." not in result.out
    no_data = next(line for line in result.out.splitlines() if line.startswith("No data in this campaign for: "))
    assert "Bradley-Terry" in no_data or "Bradley–Terry" in no_data
    assert all(title not in no_data for title in ("One-article answers: judges against the humans",))


def test_it_keeps_a_pairwise_report_as_it_was(calibration_campaign):
    result = run("calibration_report", "--campaign", calibration_campaign.name, "--rounds", "0", "--format", "md")
    assert result.code == 0, result.err
    assert "No data in this campaign for" not in result.out
    assert "human labels" in result.err
    assert [line for line in result.out.splitlines() if line.startswith("## ")][0] == "## Judges against the humans"
