"""A big batch is cleaned and rendered on every core (forked workers, annotate/services/catalogue.py):
the articles come out the same, in order, as from one process, and a process with other threads
never forks.

The forking runs in a fresh interpreter of its own: the test process has other threads (a BLAS
pool once numpy has run), and a fork from it is what the code refuses to do."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from annotate.services.catalogue import PARALLEL_MIN_CHARS, prepare_workers
from annotate.sources import ArticleRecord

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "wlc-sample"

IN_A_FRESH_PROCESS = """
import os, sys
from pathlib import Path
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
from annotate.services.catalogue import PARALLEL_MIN_CHARS, articles_prepare, prepare_workers
from annotate.sources import ArticleRecord, read_wlc

body = " ".join(f"word{k}" for k in range(2000))
records = [
    ArticleRecord(
        topic=f"Topic {i} – Överblick",
        system="wiki" if i % 2 else "agent.v1",
        markdown=f"# Topic {i}\\n\\n{body} [{i}](https://example.org/{i})\\n\\n## References\\n\\n1. A source, 2020. Retrieved 1 May 2021.\\n",
        is_reference=bool(i % 2),
    )
    for i in range(60)
]
assert sum(len(r.markdown) for r in records) >= PARALLEL_MIN_CHARS
assert prepare_workers(records) >= 2, prepare_workers(records)
seen = []
parallel = articles_prepare(records, progress=lambda done, total: seen.append((done, total)))
assert parallel == articles_prepare(records, workers=1)
assert [p.record.topic for p in parallel] == [r.topic for r in records]
assert seen == [(k, 60) for k in range(1, 61)], seen
assert "https" not in parallel[0].html and "Retrieved" not in parallel[0].display_markdown
# A worker that fails is reported, and no worker is left behind, the parent's own share finished or not.
from annotate.sources import StepRecord

def fails(markdown, error, words):
    broken = list(records)
    broken[1] = ArticleRecord(topic="Broken", system="agent.v1", markdown=markdown, steps=(StepRecord("plan", None),))
    try:
        articles_prepare(broken)
    except error as exc:
        assert words in str(exc), exc
    else:
        raise AssertionError("a failure went unnoticed")
    try:
        os.waitpid(-1, os.WNOHANG)
        raise AssertionError("a worker was left behind")
    except ChildProcessError:
        pass

fails(records[1].markdown[:-40], RuntimeError, "an import worker failed: TypeError")  # the shortest: a worker's share
fails(records[1].markdown + " more", TypeError, "")  # the longest: this process's own share
sample = Path(sys.argv[1])
if sample.is_dir():
    articles = read_wlc(sample, max_bytes=10_000_000).articles
    assert articles_prepare(articles, workers=2) == articles_prepare(articles, workers=1)
    print("sample", len(articles))
print("ok")
"""


def test_it_prepares_a_big_batch_in_forked_workers_exactly_as_in_one_process(tmp_path):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: nothing forks here (the next test checks the rule)")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", IN_A_FRESH_PROCESS, str(SAMPLE)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")


def test_it_prepares_a_small_batch_or_in_a_threaded_process_alone():
    small = [ArticleRecord(topic="T", system="s", markdown="word " * 50)]
    assert prepare_workers(small) == 1
    big = [ArticleRecord(topic=f"T{i}", system="s", markdown="word " * 20_000) for i in range(10)]
    assert sum(len(r.markdown) for r in big) >= PARALLEL_MIN_CHARS
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert prepare_workers(big) == 1
    finally:
        stop.set()
        other.join()
