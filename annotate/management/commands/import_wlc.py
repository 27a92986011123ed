from pathlib import Path

from django.core.management.base import CommandError

from annotate.management.importing import ImportCommand
from annotate.services.catalogue import batch_found_line
from annotate.sources import SourceError, read_wlc


class Command(ImportCommand):
    help = "Import a benchmark in the Wiki Live Challenge layout (repository root or data/<benchmark> folder)."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--benchmark", help="which data/<benchmark> folder, when the repository holds several")
        super().add_arguments(parser)

    def handle(self, *args, **options):
        try:
            batch = read_wlc(options["path"], benchmark=options["benchmark"], max_bytes=self.max_bytes)
        except SourceError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(batch_found_line(batch))
        self.run_import(batch, replace=options["replace"], show_progress=not options["quiet_progress"])
