import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.selectors import article_export_rows


class Command(BaseCommand):
    help = "Export every article, one JSON object per line."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["jsonl"], default="jsonl")
        parser.add_argument("--out", required=True, help="output file, or - for standard output")
        parser.add_argument("--benchmark", help="only this benchmark's topics")

    def handle(self, *args, **options):
        out = options["out"]
        if out != "-":
            target = Path(out)
            if not target.parent.is_dir():
                raise CommandError(f"{target.parent}: no such folder")
            tmp = target.with_name(target.name + ".part")
            stream = tmp.open("w", encoding="utf-8")
        else:
            stream = sys.stdout
        count = 0
        try:
            for row in article_export_rows(benchmark=options["benchmark"]):
                stream.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
        finally:
            if out != "-":
                stream.close()
        if out != "-":
            # Written to a side file first so a crash never leaves half an export under the real name.
            tmp.replace(target)
            self.stdout.write(f"{count} articles written to {out}")
