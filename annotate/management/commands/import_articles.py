from pathlib import Path

from django.core.management.base import CommandError

from annotate.management.importing import ImportCommand
from annotate.sources import SourceError, read_jsonl
from common.storable import text_problem


class Command(ImportCommand):
    help = 'Import articles from JSON Lines: {"topic", "system", "markdown", "category"?, "reference"?: true} per line.'

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--benchmark", help="benchmark name for the topics (default: the file name)")
        super().add_arguments(parser)

    def handle(self, *args, **options):
        try:
            batch = read_jsonl(options["file"], max_bytes=self.max_bytes)
        except SourceError as exc:
            raise CommandError(str(exc)) from exc
        if options["benchmark"]:
            if text_problem(options["benchmark"]):
                raise CommandError("--benchmark is not valid UTF-8 text")
            batch.benchmark = options["benchmark"]
        self.run_import(batch, replace=options["replace"], show_progress=not options["quiet_progress"])
