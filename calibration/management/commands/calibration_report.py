from pathlib import Path

from django.core.management.base import CommandError

from annotate.models import Campaign
from calibration import metrics as M
from calibration.report.alttest import DEFAULT_UNIT, UNITS
from calibration.report.build import report_cached
from calibration.report.display import TABLE_KEYS
from calibration.report.formats import FORMATS, render, render_table_csv
from calibration.report.methods import render_methods
from calibration.report.options import ReportOptions
from calibration.report.reference import DEFAULT_REFERENCE, REFERENCES
from calibration.report.shape import lead_line
from common.commands import UncheckedCommand
from common.files import write_atomically
from common.lookups import named


class Command(UncheckedCommand):
    help = (
        "Write a campaign's calibration report: judges against the humans, the human ceiling, costs, "
        "biases and Bradley-Terry rankings, every estimate with a pair-bootstrap 95% CI "
        "(fields: docs/calibration-report.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument(
            "--format",
            choices=[*FORMATS, "methods"],
            default="json",
            help="methods: a methods paragraph and a table (Markdown) for a paper",
        )
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
        parser.add_argument(
            "--swap-policy",
            choices=M.SWAP_POLICIES,
            default=M.DEFAULT_SWAP_POLICY,
            help="how an item judged in both orders counts: tie (default: the verdict both orders agree on, else a tie), "
            "half (each order half a verdict), both (right only when both orders agree with the human)",
        )
        parser.add_argument(
            "--unparsable",
            choices=M.UNPARSABLE_POLICIES,
            default=M.DEFAULT_UNPARSABLE,
            help="verdicts a judge failed to give (units left in error): drop (default) or count as wrong",
        )
        parser.add_argument(
            "--epsilon",
            type=float,
            help="the alt-test's epsilon, in (0, 1), with --epsilon-reason (default: the campaign's; none: no alt-test verdict). "
            "The authors suggest 0.2 for experts, 0.15 for skilled annotators, 0.1 for crowd workers",
        )
        parser.add_argument("--epsilon-reason", help="why this epsilon fits these annotators (stated in the report)")
        parser.add_argument(
            "--alt-unit",
            choices=UNITS,
            default=DEFAULT_UNIT,
            help="the alt-test pooled over criteria: pair (default: the pair is the unit) or item (the paper's item-level form)",
        )
        parser.add_argument("--alpha", help="selective judging: tolerated disagreement on accepted items, in (0, 1), with --delta")
        parser.add_argument("--delta", help="selective judging: risk that the guarantee fails, in (0, 1), with --alpha")
        parser.add_argument(
            "--cascade",
            metavar="J1,J2",
            help="with --alpha and --delta: the cascade's judges (default: every judge with confidences, cheapest first)",
        )
        parser.add_argument("--human-cost", help="with --alpha and --delta: USD per item labelled by humans (default: unknown)")
        parser.add_argument(
            "--human-reference",
            choices=REFERENCES,
            default=DEFAULT_REFERENCE,
            help="the human labels the judge statistics are computed against: majority (default: the labels as they are), "
            "dawid-skene or mace (one aggregated label per item), exclude-flagged (without the annotators the flag rule marks); "
            "another choice also computes the competence and sensitivity tables",
        )
        parser.add_argument(
            "--sensitivity",
            action="store_true",
            help="fit Dawid-Skene and MACE (with a bootstrap) for the competence and sensitivity tables under the majority "
            "reference too; off by default, it costs several times the rest of the report (about 14 s of CPU on 100k labels)",
        )
        parser.add_argument(
            "--majority-ties",
            choices=M.MAJORITY_TIES,
            default=M.DEFAULT_MAJORITY_TIES,
            help="the judges' majority-vote accuracy on items whose humans give no single most frequent label: drop (default: "
            "items without a strict majority left out), half (a judge giving one of k tied labels scores 1/k) or draw (one "
            "tied label drawn per item, with --seed)",
        )
        parser.add_argument(
            "--category-intervals",
            choices=["auto", "all"],
            default="auto",
            help="the judges' per-category Bradley-Terry intervals: auto (computed for up to 12 judges; above that, scores and ranks "
            "without intervals: at 65 judges they take the report from about 4 s to 7 s) or all",
        )
        parser.add_argument(
            "--table",
            metavar="KEY",
            help="with --format csv: one table of the report, every row (e.g. comparisons, criteria, bradley_terry), instead of the judges' CSV",
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        if options["rounds"] < 0:
            raise CommandError("--rounds must be 0 or more.")
        out = options["out"]
        if options["table"] is not None and options["format"] != "csv":
            raise CommandError("--table goes with --format csv.")
        if options["table"] is not None and options["table"] not in TABLE_KEYS:
            # Refused before the report is computed; a known table this report lacks is said after it.
            raise CommandError(f"unknown table '{options['table']}' (choose {', '.join(TABLE_KEYS)})")
        if out != "-" and not Path(out).parent.is_dir():
            raise CommandError(f"{Path(out).parent}: no such folder")
        try:
            # Through the cache the web processes share: a report the dashboard or the task worker
            # computed for the same data and parameters is not computed again (and one computed here serves them).
            selective = {key: options[key] for key in ("alpha", "delta", "cascade", "human_cost")}
            report = report_cached(campaign, ReportOptions.from_command(options), selective=selective)
            if options["table"] is not None:
                text = render_table_csv(report, options["table"])
            elif options["format"] == "methods":
                text = render_methods(report)
            else:
                text = render(report, options["format"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if out == "-":
            self.stdout.write(text, ending="")
        else:
            write_atomically(Path(out), text)
        self.stderr.write(f"{campaign.name}: {lead_line(report)}" + ("" if out == "-" else f" -> {out}"))
        for note in report["notes"]:
            self.stderr.write(f"note: {note}")
