"""Shared plumbing of the import commands: progress, summary and exit status."""

from __future__ import annotations

import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotate.services import ImportSummary, PreparedArticle, articles_import, articles_prepare
from annotate.sources import Batch

# Exit status when some input was skipped but the rest was imported.
PARTIAL_EXIT = 2


class ImportCommand(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("--replace", action="store_true", help="overwrite stored articles whose content changed on disk")
        parser.add_argument("--quiet-progress", action="store_true", help="do not print the progress line")

    @property
    def max_bytes(self) -> int:
        return settings.MAX_ARTICLE_BYTES

    def prepare(self, batch: Batch, *, show_progress: bool) -> list[PreparedArticle]:
        interactive = show_progress and sys.stderr.isatty()

        def progress(done: int, total: int) -> None:
            sys.stderr.write(f"\rcleaning and rendering {done}/{total} articles")
            if done == total:
                sys.stderr.write("\n")

        return articles_prepare(batch.articles, progress=progress if interactive else None)

    def run_import(self, batch: Batch, *, replace: bool, show_progress: bool = True) -> ImportSummary:
        started = time.perf_counter()
        prepared = self.prepare(batch, show_progress=show_progress)
        summary = articles_import(batch=batch, replace=replace, prepared=prepared)
        elapsed = time.perf_counter() - started
        for line in summary.report_lines(elapsed):
            self.stdout.write(line)
        if summary.problems:
            self.stderr.write(f"{len(summary.problems)} problem(s); everything else was imported:")
            for problem in summary.problems:
                self.stderr.write(f"  {problem}")
            raise CommandError(f"{len(summary.problems)} input(s) could not be imported (listed above)", returncode=PARTIAL_EXIT)
        return summary
