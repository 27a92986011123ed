"""Shared fixtures and the cast of users.

- alice: an annotator; she labels pairs and must never learn which system wrote what.
- bob: a second annotator; alice must not see his work, nor he hers.
- rachel: a researcher (staff); she runs campaigns and sees everything.
- oscar: an outsider with an account but no role in any campaign.
- susan: a superuser, the site's administrator; the only one who may point a judge at a base URL
  and a key variable of her choosing (rachel picks among the endpoints configured on the server).

Environment: PAIRWISE_SHARED names the directory holding the benchmark sample (wlc-sample/);
it defaults to ../shared beside the repository. Tests that need the sample (``sample_path``)
skip when it is not there.
"""

import io
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED = Path(os.environ.get("PAIRWISE_SHARED") or REPO.parent / "shared")
SAMPLE = SHARED / "wlc-sample"

# The loopback LLM server (tests/llm_server.py) listens on 127.0.0.1, which the outbound policy
# refuses unless allowed (judges/outbound.py): the tests allow it explicitly, through the
# environment for the commands they run as subprocesses, and in `loopback_judges_allowed` for
# this process (whose settings were read before this file).
LOOPBACK_ALLOWED = {"JUDGE_ALLOW_ADDRESSES": "127.0.0.1", "JUDGE_BASE_URL_HOSTS": "api.openai.com,127.0.0.1"}
for _name, _value in LOOPBACK_ALLOWED.items():
    os.environ.setdefault(_name, _value)

# The fixtures through which a test reaches the database. A test that takes none of them (and has no
# django_db mark) runs the same on any database: `--database-tests-only` (CI's second, PostgreSQL
# run) leaves it to the first run, and says how many it left.
DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"})


def pytest_addoption(parser):
    parser.addoption(
        "--database-tests-only",
        action="store_true",
        help="run only the tests that reach the database (a django_db mark or fixture); the others are deselected",
    )


def reaches_database(item) -> bool:
    return item.get_closest_marker("django_db") is not None or bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--database-tests-only"):
        return
    left = [item for item in items if not reaches_database(item)]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if reaches_database(item)]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The default hasher is slow on purpose; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def static_files_in_place(settings):
    # Tests run with DEBUG off but collect no static files, so there is no manifest of hashed
    # names: link and serve the files where they are, as with DEBUG on. tests/test_deploy.py
    # checks the collected, hashed files through a real server.
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True


@pytest.fixture(autouse=True)
def dashboard_job_inline(settings):
    # The dashboard's report job runs in the request (calibration/report/jobs.py): a background
    # thread has a database connection of its own, which cannot see a test's open transaction.
    # tests/test_report_jobs.py runs it in the background, on committed data (transactional_db).
    settings.CALIBRATION_BACKGROUND = False


@pytest.fixture(autouse=True)
def loopback_judges_allowed(settings):
    import ipaddress

    settings.JUDGE_ALLOW_ADDRESSES = [ipaddress.ip_network("127.0.0.1/32")]
    settings.JUDGE_BASE_URL_HOSTS = ["api.openai.com", "127.0.0.1"]


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-password")


@pytest.fixture
def rachel(django_user_model):
    return django_user_model.objects.create_user("rachel", password="rachel-password", is_staff=True)


@pytest.fixture
def oscar(django_user_model):
    return django_user_model.objects.create_user("oscar", password="oscar-password")


@pytest.fixture
def susan(django_user_model):
    return django_user_model.objects.create_superuser("susan", password="susan-password")


@pytest.fixture(scope="session")
def sample_path():
    """The WLC benchmark sample, $PAIRWISE_SHARED/wlc-sample (PAIRWISE_SHARED defaults to ../shared)."""
    if not (SAMPLE / "data").is_dir():
        pytest.skip(f"benchmark sample not found at {SAMPLE} (set PAIRWISE_SHARED to the directory holding wlc-sample/)")
    return SAMPLE


@pytest.fixture
def llm_server():
    """The fake OpenAI-compatible server of tests/llm_server.py on 127.0.0.1, one per session,
    reset before and after each test."""
    from tests.llm_server import shared_server

    server = shared_server()
    server.reset()
    yield server
    server.reset()


@pytest.fixture
def catalogue(db):
    """The demo rubric and articles, without the demo users or campaign."""
    from django.conf import settings

    from annotate.services import articles_import, criterion_set_import
    from annotate.sources import read_jsonl, read_rubric

    rubric, problems = read_rubric(FIXTURES / "criteria" / "wiki_writing.json", key="wiki_writing")
    assert not problems
    criterion_set, _ = criterion_set_import(rubric=rubric)
    batch = read_jsonl(FIXTURES / "demo" / "articles.jsonl", max_bytes=settings.MAX_ARTICLE_BYTES)
    batch.benchmark = "demo"
    articles_import(batch=batch)
    return criterion_set


@pytest.fixture
def campaign(catalogue, alice, bob):
    """Reference against two agents on 4 topics: 8 pairs, each for both alice and bob."""
    from annotate.services.campaigns import campaign_create

    return campaign_create(
        name="Pilot",
        criterion_set=catalogue,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        overlap=2,
        annotators=[alice, bob],
        rationale_min_length=5,
    )


@pytest.fixture
def demo_campaign(db):
    """``load_demo``'s users (annotator1, annotator2, …), rubric, articles and its "Demo campaign"
    (without the simulated "Demo study": tests/test_demo_figures.py loads the demo whole)."""
    from django.core.management import call_command

    from annotate.models import Campaign

    call_command("load_demo", "--no-study", stdout=io.StringIO())
    return Campaign.objects.get(name="Demo campaign")


@pytest.fixture
def calibration_campaign(alice, bob):
    """The hand dataset of tests/calibration_builders: labels and verdicts whose figures the report tests check by hand."""
    from tests.calibration_builders import hand_dataset

    return hand_dataset(alice, bob)
