from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.management.importing import PARTIAL_EXIT
from annotate.models import Campaign
from calibration.tasks import report_warm_task
from common.lookups import named
from common.storable import text_problem
from interchange import (
    DELIMITERS,
    LABEL_COLUMNS,
    OVERALL_COLUMNS,
    SPAN_COLUMNS,
    STEP_VOTE_COLUMNS,
    LabelsFileError,
    companion_paths,
    labels_import,
    rows_read,
    steps_path,
)
from judges.imports import JUDGE_SCOPES, SCOPE_CAMPAIGN, JudgeScopeError


def _has_content(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


class Command(BaseCommand):
    help = (
        "Import labels in the long format of export_labels (.csv or .jsonl) into an existing campaign, "
        "with <stem>.overall.<ext>, <stem>.spans.<ext> and <stem>.steps.<ext> (votes on the agents' steps) when they sit beside FILE. "
        "Creates missing pairs and the raters' accounts (inactive, no password)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--campaign",
            required=True,
            help="the campaign to import into (create it first with create_campaign)",
        )
        parser.add_argument(
            "--order-unknown",
            action="store_true",
            help="the file does not say in which order its human raters saw the two systems: position figures "
            "leave these labels out (a row's order_known column, when given, wins)",
        )
        parser.add_argument(
            "--judge-scope",
            choices=JUDGE_SCOPES,
            default=SCOPE_CAMPAIGN,
            help="whose judges the file's judge names are: 'campaign' (default) makes them this campaign's own, so a "
            "judge of the same name imported into another campaign stays another judge; 'global' names existing "
            "global judges on purpose (created when missing)",
        )
        parser.add_argument(
            "--skip-bad",
            action="store_true",
            help="import the good rows and report the bad ones (default: import nothing)",
        )

    def handle(self, *args, **options):
        if text_problem(options["campaign"]):
            raise CommandError("--campaign is not valid UTF-8 text")
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        path = options["file"]
        overall_path, spans_path = companion_paths(path)
        try:
            labels = rows_read(path, columns=LABEL_COLUMNS)
            # export_labels writes the companions even when they hold no row (an empty .jsonl).
            overall = rows_read(overall_path, columns=OVERALL_COLUMNS) if _has_content(overall_path) else None
            spans = rows_read(spans_path, columns=SPAN_COLUMNS) if _has_content(spans_path) else None
            steps = rows_read(steps_path(path), columns=STEP_VOTE_COLUMNS) if _has_content(steps_path(path)) else None
        except LabelsFileError as exc:
            raise CommandError(str(exc)) from exc
        try:
            report = labels_import(
                campaign=campaign,
                labels=labels,
                overall=overall,
                spans=spans,
                steps=steps,
                skip_bad=options["skip_bad"],
                order_unknown=options["order_unknown"],
                judge_scope=options["judge_scope"],
            )
        except JudgeScopeError as exc:
            raise CommandError(f"{exc}; nothing was imported") from exc
        for problem in report.problems:
            self.stderr.write(str(problem))
        if not report.imported:
            raise CommandError(f"{report.bad_rows} bad row(s) (listed above); nothing was imported")
        if labels.delimiter not in (None, ","):
            self.stdout.write(f"read {path} as {DELIMITERS[labels.delimiter]}-separated")
        for line in report.lines():
            self.stdout.write(line)
        if report.changed:
            # The dashboard's report of this many labels takes a while: the task worker computes it now.
            report_warm_task.enqueue(campaign.pk)
            self.stdout.write(
                "the calibration report is queued for the task worker (manage.py db_worker), so that the dashboard opens at once"
            )
        if report.problems:
            raise CommandError(
                f"{report.bad_rows} bad row(s) skipped (listed above); the rest was imported",
                returncode=PARTIAL_EXIT,
            )
