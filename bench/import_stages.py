"""Where the import's CPU time goes, stage by stage, here and in earlier revisions.

    python bench/import_stages.py ../shared/wlc-sample [--rounds 8] [--against 59bb9c9 ...]

Each version runs in its own process (revisions unpacked with ``git archive``, as
in bench/import.py) and times, in CPU seconds (``time.process_time``), each stage
of the import over the whole sample, separately: reading the files, stripping
citations (the block classifier included), normalizing, rendering, the table of
contents and render report, ``count_words`` of the display and of the raw text,
the content hash, and the database writes (``articles_import`` with the prepared
articles, fresh SQLite). The median of the rounds after the first is printed.
Stages are timed one by one over all articles, so their sum is close to, not
exactly, what bench/import.py measures as a whole.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = ["read", "strip", "normalize", "render", "toc", "words_display", "words_raw", "hash", "db"]
WORKER = r"""
import hashlib, json, os, statistics, sys, tempfile, time
from pathlib import Path
tree, path, rounds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, tree)
os.chdir(tree)
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='bench-stages-')}/bench.sqlite3")
os.environ["DEBUG"] = "0"
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
import django
django.setup()
from django.conf import settings
from django.core.management import call_command
call_command("migrate", verbosity=0)
from annotate.cleaning import count_words, normalize_article, strip_citations
from annotate.models import Article, Criterion, CriterionSet, System, Topic
from annotate.rendering import render, toc_from_html
from annotate.services import articles_import, articles_prepare
from annotate.sources import read_wlc
clock = time.process_time
times = {}
def timed(name, work):
    start = clock()
    out = work()
    times.setdefault(name, []).append(clock() - start)
    return out
for _ in range(rounds + 1):
    for model in (Article, Topic, System, Criterion, CriterionSet):
        model.objects.all().delete()
    batch = timed("read", lambda: read_wlc(path, max_bytes=settings.MAX_ARTICLE_BYTES))
    records = batch.articles
    stripped = timed("strip", lambda: [strip_citations(r.markdown, is_reference=r.is_reference) for r in records])
    shown = timed("normalize", lambda: [normalize_article(s, r.topic) for s, r in zip(stripped, records)])
    rendered = timed("render", lambda: [render(s) for s in shown])
    timed("toc", lambda: [(toc_from_html(x.html), x.describe()) for x in rendered])
    timed("words_display", lambda: [count_words(s) for s in shown])
    timed("words_raw", lambda: [count_words(r.markdown) for r in records])
    timed("hash", lambda: [hashlib.sha256(r.markdown.encode("utf-8")).hexdigest() for r in records])
    prepared = articles_prepare(records)
    timed("db", lambda: articles_import(batch=batch, prepared=prepared))
print(json.dumps({name: statistics.median(values[1:]) for name, values in times.items()}))
"""


def _unpack(rev: str, into: Path) -> Path:
    target = into / rev
    target.mkdir()
    done = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot unpack revision {rev!r}: {done.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=done.stdout, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--against", action="append", default=[], help="git revision to measure beside this tree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-stages-trees-") as tmp:
        trees = {"this tree": ROOT} | {rev: _unpack(rev, Path(tmp)) for rev in args.against}
        results = {}
        for name, tree in trees.items():
            done = subprocess.run(
                [sys.executable, "-c", WORKER, str(tree), str(args.path.resolve()), str(args.rounds)], capture_output=True, text=True
            )
            if done.returncode != 0:
                raise SystemExit(f"{tree}: failed:\n{done.stderr[-3000:]}")
            results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"CPU ms per stage over the sample, median of {args.rounds} rounds")
    print(f"{'stage':<14}" + "".join(f"{name:>12}" for name in results))
    for stage in [*STAGES, "total"]:
        cells = [sum(r.values()) if stage == "total" else r[stage] for r in results.values()]
        print(f"{stage:<14}" + "".join(f"{1000 * c:12.1f}" for c in cells))


if __name__ == "__main__":
    main()
