"""CI's PostgreSQL run (`--database-tests-only`, tests/conftest.py) keeps every test that reaches the
database, by mark or by fixture, and deselects, counting them, only those that reach none."""

import os
import subprocess
import sys

from tests.conftest import REPO

CHOSEN = [
    "tests/test_protocol_registry.py::test_it_accepts_the_same_module_with_the_arity_of_an_item",  # the module's mark
    "tests/test_report_jobs.py",  # no mark: a database fixture, directly or through another
    "tests/test_cleaning.py",  # pure functions
]


def collected(*options):
    env = {**os.environ, "SECRET_KEY": "test-only-not-secret", "DEBUG": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", *options, *CHOSEN],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return [line for line in result.stdout.splitlines() if "::" in line], result.stdout.splitlines()[-1]


def test_it_leaves_out_only_the_tests_that_reach_no_database():
    everything, _ = collected()
    kept, summary = collected("--database-tests-only")

    pure = [test for test in everything if test.startswith("tests/test_cleaning.py::")]
    assert len(pure) > 100
    assert kept == [test for test in everything if test not in pure]
    assert "tests/test_protocol_registry.py::test_it_accepts_the_same_module_with_the_arity_of_an_item" in kept
    assert f"({len(pure)} deselected)" in summary
