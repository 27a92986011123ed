import json
import sys
from pathlib import Path

from django.core.management.base import CommandError

from annotate.models import LABELS_ONLY_PREFIX, Campaign
from annotate.selectors import article_export_rows
from common.commands import UncheckedCommand
from common.files import atomic_files
from common.lookups import named


class Command(UncheckedCommand):
    help = "Export every article with a text (not the placeholders of labels-only campaigns), one JSON object per line."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["jsonl"], default="jsonl")
        parser.add_argument("--out", required=True, help="output file, or - for standard output")
        parser.add_argument("--benchmark", help="only this benchmark's topics")
        parser.add_argument(
            "--campaign",
            help="only the articles this campaign shows; each row then carries the campaign and its neutral_emphasis",
        )

    def handle(self, *args, **options):
        if (options["benchmark"] or "").startswith(LABELS_ONLY_PREFIX):
            raise CommandError(
                f"'{options['benchmark']}' holds the topics of a labels-only campaign: its articles have no texts to export."
            )
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign") if options["campaign"] else None
        if campaign is not None and campaign.labels_only:
            raise CommandError(f"'{campaign.name}' is a labels-only campaign: its articles have no texts to export.")
        out = options["out"]
        if out == "-":
            self._write(sys.stdout, options["benchmark"], campaign)
            return
        target = Path(out)
        if not target.parent.is_dir():
            raise CommandError(f"{target.parent}: no such folder")
        # Written to a side file first so a crash never leaves half an export under the real name.
        with atomic_files(target) as (stream,):
            count = self._write(stream, options["benchmark"], campaign)
        self.stdout.write(f"{count} articles written to {out}")

    def _write(self, stream, benchmark: str | None, campaign) -> int:
        count = 0
        for row in article_export_rows(benchmark=benchmark, campaign=campaign):
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
        return count
