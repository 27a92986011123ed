from pathlib import Path

from django.core.management.base import CommandError

from annotate.models import Campaign
from common.commands import UncheckedCommand
from common.files import atomic_files
from common.lookups import named
from interchange import (
    CALL_COLUMNS,
    FORMATS,
    LABEL_COLUMNS,
    OVERALL_COLUMNS,
    SPAN_COLUMNS,
    STEP_VOTE_COLUMNS,
    call_rows,
    calls_path,
    companion_paths,
    format_of,
    label_rows,
    overall_rows,
    rows_format,
    span_rows,
    step_vote_rows,
    steps_path,
)


class Command(UncheckedCommand):
    help = (
        "Export a campaign's labels in long format, one row per pair, criterion and rater "
        "(undecided labels are left out), with <stem>.overall.<ext> and <stem>.spans.<ext> beside the file, "
        "<stem>.steps.<ext> (votes on the agents' steps) for a campaign that shows steps, and <stem>.calls.<ext> (every judge call and its cost) when judges have run."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument(
            "--format",
            choices=FORMATS,
            help="default: from the --out extension (csv for -)",
        )
        parser.add_argument(
            "--out",
            required=True,
            help="FILE.csv or FILE.jsonl, or - for the labels alone on standard output",
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        if options["out"] == "-":
            fmt = options["format"] or "csv"
            rows = label_rows(campaign)
            for chunk in rows_format(rows, fmt=fmt, columns=LABEL_COLUMNS):
                self.stdout.write(chunk, ending="")
            self.stderr.write(f"{len(rows)} label rows")
            return
        target = Path(options["out"])
        fmt = format_of(target)
        if fmt is None or (options["format"] and options["format"] != fmt):
            wanted = options["format"] or "csv or .jsonl"
            raise CommandError(f"{target}: the file name must end in .{wanted} (import_labels reads the format from it)")
        if not target.parent.is_dir():
            raise CommandError(f"{target.parent}: no such folder")
        overall_path, spans_path = companion_paths(target)
        outputs = [
            (target, label_rows(campaign), LABEL_COLUMNS, "label"),
            (overall_path, overall_rows(campaign), OVERALL_COLUMNS, "overall"),
            (spans_path, span_rows(campaign), SPAN_COLUMNS, "span"),
        ]
        if campaign.show_steps:  # the votes on the agents' steps, one row per step voted
            outputs.append((steps_path(target), step_vote_rows(campaign), STEP_VOTE_COLUMNS, "step vote"))
        calls = call_rows(campaign)
        if calls:  # every judge call, retried and failed ones too: their cost sums to the spend
            outputs.append((calls_path(target), calls, CALL_COLUMNS, "judge call"))
        # Renamed only once all are written: a crash never leaves half an export under the real names.
        with atomic_files(*(path for path, *_ in outputs)) as streams:
            for stream, (_, rows, columns, _) in zip(streams, outputs):
                stream.writelines(rows_format(rows, fmt=fmt, columns=columns))
        for path, rows, _, what in outputs:
            self.stdout.write(f"{len(rows)} {what} rows written to {path}")
