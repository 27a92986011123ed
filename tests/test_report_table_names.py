"""Every table name the README and docs/ mention is accepted by `calibration_report --format csv --table`.

The names are read from the documents themselves (`--table NAME`, `?table=NAME`, and the backticked
lists that follow "The keys:" and "nine (or ten) tables ("), so a table the docs name and the command refuses,
or a documented list that drifts from the command's, fails here.
"""

import csv
import io
import re
from pathlib import Path

import pytest

from calibration.report.display import TABLE_KEYS
from calibration.report.tables.orderings import KEYS as ORDERING_KEYS
from tests.helpers import run
from tests.test_report_pointwise import synthetic_rows, write_csv

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NAME = r"[a-z][a-z0-9_]*"


def documented_table_names() -> dict[str, str]:
    """name -> the first document naming it."""
    found: dict[str, str] = {}
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        names = re.findall(rf"--table\s+({NAME})\b", text) + re.findall(rf"table=({NAME})\b", text)
        flat = re.sub(r"\s+", " ", text)
        for lead in (r"The keys: ", r"(?:nine|ten) tables \("):
            for listed in re.findall(lead + r"((?:`[^`]+`[^.`]*?)+)[.)]", flat):
                names += re.findall(rf"`({NAME})`", listed)
        for name in names:
            found.setdefault(name, path.name)
    return found


def test_it_finds_the_documented_lists():
    names = documented_table_names()
    # The docs' full list of keys is the command's list.
    assert set(names) == set(TABLE_KEYS), set(names) ^ set(TABLE_KEYS)
    assert {"pointwise_judges", "comparisons", "human_position", "design"} <= set(names)


@pytest.fixture
def both(calibration_campaign, tmp_path):
    """The pairwise hand campaign, and a campaign of answers about one article imported from a labels file."""
    assert run("create_campaign", "--name", "arena", "--labels-only").code == 0
    result = run("import_labels", "--campaign", "arena", str(write_csv(tmp_path / "answers.csv", synthetic_rows(topics=12))))
    assert result.code == 0, result.err
    return [calibration_campaign.name, "arena"]


def test_it_runs_every_documented_table_through_the_command(both):
    for name, document in documented_table_names().items():
        written = []
        for campaign in both:
            result = run("calibration_report", "--campaign", campaign, "--rounds", "20", "--format", "csv", "--table", name)
            assert "unknown table" not in result.err, (name, document, result.err)
            if result.code == 0:
                rows = list(csv.reader(io.StringIO(result.out)))
                assert rows and rows[0], (name, campaign)
                written.append(campaign)
            else:
                assert f"table '{name}' is not in this report: " in result.err, (name, campaign, result.err)
        if name in ("design", "acceptable_sets", "gold", "steps", "steps_by_kind", "step_judges", *ORDERING_KEYS):
            # actively sampled campaigns only, campaigns that ask for sets only, campaigns with gold pairs only, campaigns
            # that show the agents' steps only, campaigns of rankings only; neither of these is (tests/test_acceptable_sets.py
            # writes the second, tests/test_demo_figures.py the third, tests/test_step_statistics.py and tests/test_step_judge.py
            # the steps, tests/test_group_items.py the rankings')
            continue
        assert written, f"{name} (named in {document}) was written for neither campaign"


def test_it_says_why_a_known_table_is_absent(calibration_campaign):
    result = run(
        "calibration_report", "--campaign", calibration_campaign.name, "--rounds", "0", "--format", "csv", "--table", "pointwise_judges"
    )
    assert result.code != 0 and "the campaign has no answers about one article" in result.err
    result = run("calibration_report", "--campaign", calibration_campaign.name, "--format", "csv", "--table", "nope")
    assert result.code != 0 and "unknown table 'nope'" in result.err and "pointwise_judges" in result.err
