from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.services.catalogue import criterion_set_import, rubric_read


class Command(BaseCommand):
    help = "Import a criteria file (Wiki Live Challenge layout). Changed text becomes a new version; old versions stay."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--key", help="the set's name in campaigns (default: the file name without .json)")

    def handle(self, *args, **options):
        path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        rubric, problems = rubric_read(path, key=options["key"])
        if problems:
            for problem in problems:
                self.stderr.write(f"  {problem}")
            raise CommandError(f"{path}: not imported ({len(problems)} problem(s) listed above)")
        criterion_set, created = criterion_set_import(rubric=rubric)
        state = "new" if created else "unchanged"
        self.stdout.write(
            f"criterion set: {criterion_set} ({state}), {rubric.criterion_count} criteria in {len(rubric.categories)} categories"
        )
