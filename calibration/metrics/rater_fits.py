"""One rater's ranking fits, pure, so that a big report can compute the raters' in other processes.

The raters' Bradley-Terry bootstraps are most of a big report's work, and in threads they share one
interpreter lock between the numpy calls. `fitting_pool` gives a pool of processes for them when the
work is big enough to pay for the processes (labels x rounds at least PROCESS_WORK) and the machine
has more than one core; the figures are the same either way (tests/test_report_processes.py).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from calibration.metrics.labels import LabelTable
from calibration.metrics.ranking import bradley_terry, bradley_terry_by_category
from calibration.metrics.winrates import win_rate_vs_field, win_rate_vs_reference

ANCHOR = 1000.0
# Labels x bootstrap rounds from which the raters' fits go to other processes (below it, starting them
# costs more than the threads lose: at 100k labels and 1,000 rounds, 10^8).
PROCESS_WORK = 20_000_000
MAX_PROCESSES = 4


def rater_fits(
    table: LabelTable, reference: str | None, rounds: int, seed: int, weights=None, category_rounds: int | None = None
) -> tuple | None:
    """A rater's Bradley-Terry fits (overall, by category with `category_rounds`, else `rounds`; `weights`
    one per label) and win rates; None when it has no labels or does not compare the reference. Pure:
    the raters' run side by side."""
    if not len(table):
        return None
    present = {table.vocab.systems[c] for c in np.unique(np.concatenate([table.sys_lo, table.sys_hi]))}
    if reference is not None and reference not in present:
        return None
    bt = bradley_terry(table, reference=reference, anchor=ANCHOR, rounds=rounds, seed=seed, weights=weights)
    category_rounds = rounds if category_rounds is None else category_rounds
    by_category = bradley_terry_by_category(table, reference=reference, anchor=ANCHOR, rounds=category_rounds, seed=seed, weights=weights)
    if reference is None:
        win_rates = win_rate_vs_field(table, rounds=rounds, seed=seed)
    else:
        win_rates = win_rate_vs_reference(table, reference=reference, rounds=rounds, seed=seed)
    return bt, by_category, win_rates


def one_blas_thread() -> None:
    """Each worker process's initializer: one BLAS thread, as in the report's own threads."""
    threadpool_limits(limits=1, user_api="blas")


def wants_processes(labels: int, rounds: int) -> bool:
    """Whether work of this size goes to processes (by default)."""
    return (os.cpu_count() or 1) > 1 and labels * rounds >= PROCESS_WORK


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def start_server() -> None:
    """Starts the processes' server (which imports numpy, scipy and this module, half a second of a
    core) without waiting for it: a report that will want processes calls this before reading its
    labels, so that the server is ready by the time the fits are."""
    _context()
    from multiprocessing import forkserver

    forkserver.ensure_running()


def fitting_pool(labels: int, rounds: int, processes: bool | None = None) -> ProcessPoolExecutor | None:
    """A pool of processes for the raters' fits, or None (threads will do): `processes` True or False
    decides; None decides by the work (labels x rounds against PROCESS_WORK) and the cores. The
    processes are forked from a server process that imported this module alone (no Django, no open
    connection, no thread of the caller's), so that a web process's threads are safe."""
    cores = os.cpu_count() or 1
    if processes is None:
        processes = wants_processes(labels, rounds)
    if not processes:
        return None
    return ProcessPoolExecutor(max_workers=max(2, min(cores, MAX_PROCESSES)), mp_context=_context(), initializer=one_blas_thread)
