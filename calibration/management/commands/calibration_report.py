from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.files import write_atomically
from annotate.management.lookups import campaign_named
from calibration.report import build_report, parse_ensembles
from calibration.report_formats import FORMATS, render


class Command(BaseCommand):
    # A read-only report: Django's system checks (~0.8 s on a 2-core machine) are `manage.py check`'s job.
    requires_system_checks = []
    help = (
        "Write a campaign's calibration report: judges against the humans, the human ceiling, costs, "
        "biases and Bradley-Terry rankings, every estimate with a pair-bootstrap 95% CI "
        "(fields: docs/calibration-report.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument("--format", choices=list(FORMATS), default="json")
        parser.add_argument("--out", default="-", help="file to write (replaced atomically), or - for standard output")
        parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds (0: no confidence intervals)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--reference",
            help="system scored 1000 in Bradley-Terry and the one win rates are against "
            "(default: the campaign's reference, else wikipedia if compared, else none: the mean score is 1000)",
        )
        parser.add_argument(
            "--ensemble",
            action="append",
            metavar="A,B[,C...]",
            help="also evaluate the majority vote of these judges as a judge (repeatable), e.g. --ensemble gpt-4.1,claude-3.5-sonnet,qwen2.5-72b",
        )
        parser.add_argument("--include-unsubmitted", action="store_true", help="also count labels of assignments not submitted yet")

    def handle(self, *args, **options):
        campaign = campaign_named(options["campaign"])
        if options["rounds"] < 0:
            raise CommandError("--rounds must be 0 or more.")
        out = options["out"]
        if out != "-" and not Path(out).parent.is_dir():
            raise CommandError(f"{Path(out).parent}: no such folder")
        try:
            ensembles = parse_ensembles(options["ensemble"])
            report = build_report(
                campaign,
                rounds=options["rounds"],
                seed=options["seed"],
                reference=options["reference"],
                include_unsubmitted=options["include_unsubmitted"],
                ensembles=ensembles,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        text = render(report, options["format"])
        if out == "-":
            self.stdout.write(text, ending="")
        else:
            write_atomically(Path(out), text)
        judges = len(report["judges"])
        self.stderr.write(
            f"{campaign.name}: {report['humans']['n_labels']} human labels, {judges} judge{'s' if judges != 1 else ''}"
            + ("" if out == "-" else f" -> {out}")
        )
        for note in report["notes"]:
            self.stderr.write(f"note: {note}")

