import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.files import atomic_files
from annotate.selectors import article_export_rows
from annotate.services.placeholders import LABELS_ONLY_PREFIX


class Command(BaseCommand):
    help = "Export every article with a text (not the placeholders of labels-only campaigns), one JSON object per line."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["jsonl"], default="jsonl")
        parser.add_argument("--out", required=True, help="output file, or - for standard output")
        parser.add_argument("--benchmark", help="only this benchmark's topics")

    def handle(self, *args, **options):
        if (options["benchmark"] or "").startswith(LABELS_ONLY_PREFIX):
            raise CommandError(
                f"'{options['benchmark']}' holds the topics of a labels-only campaign: "
                "its articles have no texts to export."
            )
        out = options["out"]
        if out == "-":
            self._write(sys.stdout, options["benchmark"])
            return
        target = Path(out)
        if not target.parent.is_dir():
            raise CommandError(f"{target.parent}: no such folder")
        # Written to a side file first so a crash never leaves half an export under the real name.
        with atomic_files(target) as (stream,):
            count = self._write(stream, options["benchmark"])
        self.stdout.write(f"{count} articles written to {out}")

    def _write(self, stream, benchmark: str | None) -> int:
        count = 0
        for row in article_export_rows(benchmark=benchmark):
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
        return count
