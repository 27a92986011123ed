"""What every benchmark starts with: Django on a throw-away database, and the sample or the demo."""

import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "wlc-sample"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def django_on_scratch_database(name: str, *, debug: bool = True) -> None:
    """Sets Django up on a fresh SQLite file (unless DATABASE_URL names another database) and migrates it."""
    workdir = tempfile.mkdtemp(prefix=f"bench-{name}-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir}/bench.sqlite3")
    # With DEBUG off Django does not record every statement, as in production.
    os.environ["DEBUG"] = "1" if debug else "0"
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def load_sample_or_demo(path: Path) -> tuple[str, str]:
    """Imports the Wiki Live Challenge sample at `path`, or the demo when it is absent.

    Returns (where the articles came from, the key of the 39-criterion rubric).
    """
    from django.core.management import call_command
    from django.core.management.base import CommandError

    if (path / "data").is_dir():
        try:
            call_command("import_wlc", str(path), "--quiet-progress", stdout=io.StringIO())
        except CommandError as exc:
            print(f"import: {exc}")  # some inputs were skipped; the rest is enough to measure
        return str(path), "wiki_writing_criteria"
    print(f"{path} has no data/ folder: measuring on the demo articles instead")
    call_command("load_demo", stdout=io.StringIO())
    return "the demo articles", "wiki_writing"


AGENTS = ["atlas_agent", "quill_researcher", "ember.v2", "north-star"]


def wiki_catalogue(*, topics: int, benchmark: str):
    """The wiki_writing rubric and `topics` synthetic topics, each written by the reference and the
    4 agents (AGENTS); returns the rubric's criterion set. Call after `django_on_scratch_database`."""
    from annotate.services import articles_import, criterion_set_import
    from annotate.sources import ArticleRecord, Batch, SystemRecord, read_rubric

    rubric, problems = read_rubric(ROOT / "fixtures" / "criteria" / "wiki_writing.json", key="wiki_writing")
    if problems:
        sys.exit(f"rubric: {problems}")
    criterion_set, _ = criterion_set_import(rubric=rubric)
    batch = Batch(benchmark=benchmark)
    systems = ["wikipedia", *AGENTS]
    batch.systems = {key: SystemRecord(key=key, name=key, is_reference=key == "wikipedia") for key in systems}
    batch.articles = [
        ArticleRecord(topic=f"Topic {t:03d}", system=s, markdown=f"# Topic {t:03d}\n\nA text on topic {t} by {s}.\n")
        for t in range(topics)
        for s in systems
    ]
    articles_import(batch=batch)
    return criterion_set
