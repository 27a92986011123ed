import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.management.importing import PARTIAL_EXIT
from annotate.models import Campaign
from common.lookups import named
from common.names import NAME_RULE
from judges.imports import JUDGE_SCOPES, SCOPE_CAMPAIGN
from judges.wlc_results import wlc_results_import


class Command(BaseCommand):
    help = (
        "Import verdict files written by the Wiki Live Challenge evaluation script (mode winrate) as an imported "
        "judge. 'gt' is the campaign's reference article, 'gen' the article of --system. API failures, which that "
        "script writes as ties with an 'Error:' reason, are imported as errors, never as ties."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument(
            "--judge", required=True, help=f"judge name, e.g. gpt-4.1 (created as an imported judge if missing): {NAME_RULE}"
        )
        parser.add_argument("--system", required=True, help="the system key whose articles are 'gen'")
        parser.add_argument(
            "--judge-scope",
            choices=JUDGE_SCOPES,
            default=SCOPE_CAMPAIGN,
            help="'campaign' (default): --judge is this campaign's own judge, another campaign's judge of that name stays "
            "another judge; 'global': --judge names the global judge of that name on purpose",
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        files, unreadable = [], []
        for path in options["files"]:
            try:
                files.append((str(path), json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                unreadable.append((str(path), f"cannot be read as JSON ({exc})"))
        try:
            report = wlc_results_import(
                campaign=campaign, judge_name=options["judge"], system=options["system"], files=files, judge_scope=options["judge_scope"]
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        problems = unreadable + report.problems
        for name, note in report.notes:
            self.stdout.write(f"{name}: {note}")
        for name, problem in problems:
            self.stderr.write(f"{name}: {problem}")
        units = ", ".join(f"{n} {what}" for what, n in report.units.items())
        self.stdout.write(
            f"judge '{report.judge.name}'{' (created)' if report.judge_created else ''}: {report.files} file(s), "
            f"{report.verdicts} verdicts, {report.errors} API errors imported as errors (not ties); units: {units}; "
            f"pairs created: {report.pairs_created}"
        )
        if report.ties_outside_policy:
            self.stdout.write(f"note: {report.ties_outside_policy} tie(s) imported although the campaign does not allow ties")
        if problems:
            raise CommandError(f"{len(problems)} problem(s) (listed above); everything else was imported", returncode=PARTIAL_EXIT)
