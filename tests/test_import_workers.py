"""A big batch is cleaned and rendered on every core (forked workers, annotate/services/catalogue.py):
the articles come out the same, in order, as from one process, and a process with other threads
never forks."""

import threading
from pathlib import Path

import pytest

from annotate.services.catalogue import PARALLEL_MIN_CHARS, articles_prepare, prepare_workers
from annotate.sources import ArticleRecord, read_wlc

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "wlc-sample"


def batch(n: int, words: int) -> list[ArticleRecord]:
    body = " ".join(f"word{k}" for k in range(words))
    return [
        ArticleRecord(
            topic=f"Topic {i} – Överblick",
            system="wiki" if i % 2 else "agent.v1",
            markdown=f"# Topic {i}\n\n{body} [{i}](https://example.org/{i})\n\n## References\n\n1. A source, 2020. Retrieved 1 May 2021.\n",
            is_reference=bool(i % 2),
        )
        for i in range(n)
    ]


def test_it_prepares_a_big_batch_in_forked_workers_exactly_as_in_one_process():
    records = batch(60, 2000)
    assert sum(len(r.markdown) for r in records) >= PARALLEL_MIN_CHARS
    if prepare_workers(records) < 2:
        pytest.skip("one core here, or a thread is running: the batch is prepared in this process")
    seen = []
    parallel = articles_prepare(records, progress=lambda done, total: seen.append((done, total)))
    assert parallel == articles_prepare(records, workers=1)
    assert [p.record.topic for p in parallel] == [r.topic for r in records]
    assert seen == [(k, 60) for k in range(1, 61)]
    assert "https" not in parallel[0].html and "Retrieved" not in parallel[0].display_markdown


def test_it_prepares_a_small_batch_or_in_a_threaded_process_alone():
    assert prepare_workers(batch(3, 50)) == 1
    big = batch(60, 2000)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert prepare_workers(big) == 1
    finally:
        stop.set()
        other.join()


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/wlc-sample is not here")
def test_it_prepares_the_sample_alike_in_workers_and_alone():
    records = read_wlc(SAMPLE, max_bytes=10_000_000).articles
    assert articles_prepare(records, workers=2) == articles_prepare(records, workers=1)
