"""A big report fits its raters' Bradley–Terry bootstraps in other processes: the same figures as in threads."""

import json
import os
import threading

import pytest

from annotate.models import Label
from calibration import selectors
from calibration.metrics import rater_fits as fits
from calibration.report.build import report_from_inputs
from judges.models import JudgeVerdict
from tests.calibration_builders import hand_dataset, offline_campaign, offline_inputs, summary
from tests.test_report_category_intervals import rows_for


def as_text(report: dict) -> str:
    return json.dumps({k: v for k, v in report.items() if k != "generated_at"}, sort_keys=True)


def report(processes: bool) -> dict:
    rows = rows_for(3, seed=4)
    judges = [summary(f"judge-{j:02d}.v1.5") for j in range(3)]
    return report_from_inputs(offline_campaign(), offline_inputs(rows, judges), rounds=80, processes=processes)


def test_it_gives_the_same_report_from_processes_as_from_threads():
    assert as_text(report(processes=True)) == as_text(report(processes=False))


def test_it_computes_in_processes_from_a_thread_of_a_busy_process():
    """A web process computes its reports in a background thread beside others: the pool's processes
    come from a server process, not from a fork of this one."""
    out: dict = {}
    busy = threading.Event()
    other = threading.Thread(target=busy.wait, args=(30,))
    other.start()
    try:
        worker = threading.Thread(target=lambda: out.update(report=report(processes=True)))
        worker.start()
        worker.join(120)
    finally:
        busy.set()
        other.join()
    assert "report" in out and as_text(out["report"]) == as_text(report(processes=False))


def test_it_uses_processes_only_for_big_work_on_more_than_one_core():
    assert fits.fitting_pool(1_000, 1_000) is None
    assert fits.fitting_pool(10**6, 1_000, processes=False) is None
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: no pool for big work either")
    pool = fits.fitting_pool(fits.PROCESS_WORK, 1)
    try:
        assert pool is not None and pool.submit(sum, [1, 2]).result(60) == 3
    finally:
        pool.shutdown()


def test_it_starts_the_server_ahead_and_then_uses_it():
    assert fits.wants_processes(fits.PROCESS_WORK, 1) == ((os.cpu_count() or 1) > 1)
    assert not fits.wants_processes(fits.PROCESS_WORK - 1, 1)
    fits.start_server()  # returns at once; a second call finds it running
    fits.start_server()
    assert as_text(report(processes=True)) == as_text(report(processes=False))


@pytest.mark.django_db
def test_it_counts_what_a_report_will_rank_before_reading_it(alice, bob):
    campaign = hand_dataset(alice, bob)
    expected = Label.objects.filter(assignment__pair__campaign=campaign).count()
    expected += JudgeVerdict.objects.filter(unit__pair__campaign=campaign).count()
    assert expected > 0 and selectors.rows_to_rank(campaign=campaign) == expected
