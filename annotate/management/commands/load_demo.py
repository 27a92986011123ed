import csv
import io
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from annotate import demo_labels
from annotate.models import Campaign, GoldPair
from annotate.services.campaign_settings import campaign_settings_change
from annotate.services.campaigns import campaign_create
from annotate.services.catalogue import articles_import, criterion_set_import
from annotate.services.gold import gold_pairs_make
from annotate.sources import read_jsonl, read_rubric
from common.commands import UncheckedCommand
from common.names import REFERENCE_SYSTEM

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
RUBRIC = FIXTURES / "criteria" / "wiki_writing.json"
ARTICLES = FIXTURES / "demo" / "articles.jsonl"

# Local demo accounts; the passwords are printed and are not secrets.
ACCOUNTS = [
    ("researcher", "demo-researcher", True),
    ("annotator1", "demo-annotator1", False),
    ("annotator2", "demo-annotator2", False),
]


DEMO_CAMPAIGN = "Demo campaign"
# A labels-only campaign of simulated raters (annotate/demo_labels.py), imported through
# `import_labels`: enough annotators, pairs and confidences for every headline figure of the report.
DEMO_STUDY = "Demo study"
DEMO_GOLD_PER_DEGRADATION = 1
DEMO_STUDY_EPSILON = 0.15
DEMO_STUDY_ALPHA, DEMO_STUDY_DELTA = 0.15, 0.1
DEMO_STUDY_EPSILON_REASON = (
    "simulated skilled annotators (the authors suggest 0.15 for skilled annotators); the demo's labels are made from a seed"
)
# Both demo annotators label these first pairs before any other, so the human ceiling shows early.
DEMO_CALIBRATION_PAIRS = 2
INSTRUCTIONS = """Read both articles, then decide for every criterion which article does better.

- Judge the writing only; the articles' sources are hidden on purpose.
- Write a short reason for each choice, naming the passage that decided it.
- Select a passage in either article to mark it as good or bad.
"""


class Command(UncheckedCommand):
    # `make demo` runs it right after `migrate`, which has run the system checks.
    help = "Load the demo rubric and articles and create the demo accounts (safe to run again)."

    def add_arguments(self, parser):
        parser.add_argument("--logins", action="store_true", help="only print the demo's logins (what `make demo` ends with)")
        parser.add_argument("--no-logins", action="store_true", help="load without printing the logins (`make demo` prints them last)")
        parser.add_argument(
            "--no-study",
            action="store_true",
            help=f"leave out the simulated raters: '{DEMO_STUDY}', their labels-only campaign, and their answers on "
            f"the known-answer pairs of '{DEMO_CAMPAIGN}' (the tests' demo fixture does)",
        )

    def handle(self, *args, **options):
        if options["logins"]:
            self._write_logins()
            return
        rubric, problems = read_rubric(RUBRIC, key="wiki_writing")
        if problems:
            raise CommandError("; ".join(str(p) for p in problems))
        batch = read_jsonl(ARTICLES, max_bytes=settings.MAX_ARTICLE_BYTES)
        batch.benchmark = "demo"
        if batch.problems:
            raise CommandError("; ".join(str(p) for p in batch.problems))
        with transaction.atomic():
            criterion_set, _ = criterion_set_import(rubric=rubric)
            summary = articles_import(batch=batch)
            User = get_user_model()
            for username, password, staff in ACCOUNTS:
                user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff, "is_superuser": staff})
                if created:
                    user.set_password(password)
                    user.save()
            if not Campaign.objects.filter(name=DEMO_CAMPAIGN).exists():
                campaign_create(
                    name=DEMO_CAMPAIGN,
                    criterion_set=criterion_set,
                    systems=[REFERENCE_SYSTEM, "atlas_agent", "quill_researcher"],
                    overlap=2,
                    ask_overall=True,
                    instructions=INSTRUCTIONS,
                    annotators=list(User.objects.filter(username__in=["annotator1", "annotator2"])),
                    benchmark="demo",
                    calibration_pairs=DEMO_CALIBRATION_PAIRS,
                    # What the annotators could tell is measured (the guess question) and made smaller.
                    neutral_emphasis=True,
                    neutral_headings=True,
                    guess_question=True,
                )
        self.stdout.write(f"criterion set {criterion_set}; " + "; ".join(summary.lines()))
        if not options["no_study"] and not Campaign.objects.filter(name=DEMO_STUDY).exists():
            self._study_load(criterion_set)
        if not options["no_study"]:
            self._gold_load(Campaign.objects.get(name=DEMO_CAMPAIGN))
        self.stdout.write(
            f"Campaign '{DEMO_CAMPAIGN}' is ready for annotator1 and annotator2; both label its "
            f"{DEMO_CALIBRATION_PAIRS} calibration pairs first."
        )
        if not options["no_logins"]:
            self._write_logins()

    @staticmethod
    def _import(rows, campaign: str) -> None:
        """Writes `rows` (annotate.demo_labels.Row) as a labels file and imports it with `import_labels`."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "demo-labels.csv"
            with path.open("w", newline="", encoding="utf-8") as out:
                writer = csv.writer(out)
                writer.writerow(demo_labels.HEADER)
                writer.writerows(row.cells() for row in rows)
            call_command("import_labels", str(path), campaign=campaign, stdout=io.StringIO())

    def _gold_load(self, campaign: Campaign) -> None:
        """Known-answer pairs on the demo campaign (`make_gold`, one per degradation), answered by the
        simulated annotators, so that gold accuracy shows. Its gold rate stays 0: the demo's
        annotators are not handed them, and the demo campaign's other pairs hold no simulated label."""
        if GoldPair.objects.filter(pair__campaign=campaign).exists():
            return
        with transaction.atomic():
            gold_pairs_make(campaign=campaign, per_degradation=DEMO_GOLD_PER_DEGRADATION, seed=0)
            golds = GoldPair.objects.filter(pair__campaign=campaign).select_related("pair__topic", "pair__article_b__system")
            items = [(g.pair.topic.title, g.pair.article_b.system.key, sorted(g.expected)) for g in golds.order_by("degradation")]
            self._import(demo_labels.gold_rows(items), DEMO_CAMPAIGN)
        self.stdout.write(
            f"Campaign '{DEMO_CAMPAIGN}' has {len(items)} known-answer pairs (gold rate 0: not handed out), "
            f"answered by the {len(demo_labels.ANNOTATORS)} simulated annotators."
        )

    def _study_load(self, criterion_set):
        """The simulated study: a labels-only campaign, its ε, and its labels imported from a file
        written here from the seed (the file is what `export_labels` would give back)."""
        with transaction.atomic():
            study = campaign_create(
                name=DEMO_STUDY, criterion_set=criterion_set, labels_only=True, reference=REFERENCE_SYSTEM, allow_tie=True
            )
            campaign_settings_change(
                campaign=study, values={"alt_epsilon": DEMO_STUDY_EPSILON, "alt_epsilon_reason": DEMO_STUDY_EPSILON_REASON}
            )
            rows = demo_labels.study_rows()
            # The judges' verdicts first, then the plan frozen before the first human label, as a study
            # pre-registers its analysis (α and δ for selective judging, ε recorded above), then the labels.
            self._import([row for row in rows if row.rater_kind == "judge"], DEMO_STUDY)
            call_command(
                "freeze_plan",
                campaign=DEMO_STUDY,
                planned_pairs=len(demo_labels.topics()) * len(demo_labels.SYSTEMS),
                statistics="par,kappa,alt-test,selective",
                alpha=str(DEMO_STUDY_ALPHA),
                delta=str(DEMO_STUDY_DELTA),
                by="researcher",
                stdout=io.StringIO(),
            )
            self._import([row for row in rows if row.rater_kind == "human"], DEMO_STUDY)
        raters = len(demo_labels.ANNOTATORS)
        pairs = len(demo_labels.topics()) * len(demo_labels.SYSTEMS)
        self.stdout.write(
            f"Campaign '{DEMO_STUDY}' holds simulated labels: {raters} annotators on {pairs} pairs and "
            f"{len(demo_labels.JUDGES)} judges with confidences (seed {demo_labels.SEED}), its study plan frozen before the labels."
        )

    def _write_logins(self):
        self.stdout.write("Demo logins (username / password):")
        for username, password, staff in ACCOUNTS:
            role = "researcher (staff, admin)" if staff else "annotator"
            self.stdout.write(f"  {username} / {password}   {role}")
