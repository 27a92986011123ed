"""The docs site's generated reference pages match the code: the commands' own parsers, the variables
config/settings.py reads and the OpenAPI schema (docs/gen_reference.py writes them)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs"))

import gen_reference  # noqa: E402


def test_it_keeps_the_committed_reference_pages_up_to_date():
    env = {**os.environ, "DEBUG": "1"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run([sys.executable, "docs/gen_reference.py", "--check"], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_it_documents_every_variable_settings_reads_and_no_other():
    names = [name for name, _ in gen_reference.settings_variables()]
    assert "CALIBRATION_ROUNDS" in names and "JUDGE_ENDPOINTS" in names
    assert set(names) == set(gen_reference.SETTINGS)


def test_it_names_the_range_of_a_bounded_whole_number():
    kinds = dict(gen_reference.settings_variables())
    assert kinds["CALIBRATION_ROUNDS"] == "whole number, 0 to 100000"
    assert kinds["AXES_FAILURE_LIMIT"] == "whole number, at least 1"


@pytest.mark.parametrize("command", ["create_campaign", "run_judges", "calibration_report", "import_labels"])
def test_it_lists_each_command_with_its_options(command):
    page = (REPO / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert f"## {command}\n" in page
    assert f"usage: manage.py {command}" in page


def test_it_keeps_the_readme_to_one_screen_with_links_that_resolve():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert readme.startswith("# Pairwise") and "make demo" in readme.split("\n\n")[1]
    links = re.findall(r"\]\(((?:docs/)[^)#]*)", readme)
    assert len(links) >= 20
    assert [link for link in links if not (REPO / link).exists()] == []
