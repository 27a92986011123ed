"""What the cleaner removed, per system and per article, recomputed from the stored texts."""

import csv
import json
from collections import defaultdict

from django.core.management.base import CommandError

from annotate.cleaning.blocks import CONTENT, ENTRY, NOTE
from annotate.removal import PROSE_LOSS_LIMIT, SECTION_PROSE_MIN
from annotate.selectors import cleaning_removals
from common.commands import UncheckedCommand
from common.spreadsheet import row_safe

ARTICLE_COLUMNS = [
    "benchmark",
    "system",
    "topic",
    "words",
    "words_removed",
    "sections_removed",
    "removed_sections",
    "kept_reference_sections",
    "prose_words",
    "prose_words_removed",
    "prose_lost_percent",
    "words_removed_percent",
    "entries_removed",
    "notes_removed",
    "blocks_kept",
    "flags",
]
SYSTEM_COLUMNS = [
    "system",
    "articles",
    "words",
    "words_removed",
    "words_removed_percent",
    "prose_words",
    "prose_words_removed",
    "prose_lost_percent",
    "entries_removed",
    "notes_removed",
    "blocks_kept",
    "flagged",
]
# How many blocks' decisions the Markdown report lists per system and class; the JSON lists all.
BLOCKS_SHOWN = 40


def _article_row(row) -> dict:
    removal = row.removal
    return {
        "benchmark": row.article.topic.benchmark,
        "system": row.article.system.key,
        "topic": row.article.topic.title,
        "words": removal.words,
        "words_removed": removal.removed_words,
        "sections_removed": len(removal.removed_sections),
        "removed_sections": [s.heading for s in removal.removed_sections],
        "kept_reference_sections": [s.heading for s in removal.kept_reference_sections],
        "prose_words": removal.prose_words,
        "prose_words_removed": removal.removed_prose_words,
        "prose_lost_percent": removal.prose_lost_percent,
        "words_removed_percent": removal.words_removed_percent,
        "entries_removed": sum(1 for d in removal.decisions if d.kind == ENTRY),
        "notes_removed": sum(1 for d in removal.decisions if d.kind == NOTE),
        "blocks_kept": len(removal.kept_blocks),
        "flags": list(removal.flags),
        "decisions": [
            {
                "heading": d.heading,
                "class": d.kind,
                "removed": d.removed,
                "reason": d.reason,
                "score": d.score,
                "words": d.words,
                "excerpt": d.excerpt,
            }
            for d in removal.decisions
        ],
    }


def _system_rows(articles: list[dict]) -> list[dict]:
    by_system: dict[str, list[dict]] = defaultdict(list)
    for row in articles:
        by_system[row["system"]].append(row)
    rows = []
    for system, items in sorted(by_system.items()):
        prose = sum(r["prose_words"] for r in items)
        prose_removed = sum(r["prose_words_removed"] for r in items)
        words = sum(r["words"] for r in items)
        removed = sum(r["words_removed"] for r in items)
        rows.append(
            {
                "system": system,
                "articles": len(items),
                "words": words,
                "words_removed": removed,
                "words_removed_percent": round(100 * removed / words, 1) if words else 0.0,
                "prose_words": prose,
                "prose_words_removed": prose_removed,
                "prose_lost_percent": round(100 * prose_removed / prose, 1) if prose else 0.0,
                "entries_removed": sum(r["entries_removed"] for r in items),
                "notes_removed": sum(r["notes_removed"] for r in items),
                "blocks_kept": sum(r["blocks_kept"] for r in items),
                "flagged": sum(1 for r in items if r["flags"]),
            }
        )
    return rows


def _md_cell(value) -> str:
    if isinstance(value, list):
        value = "; ".join(value)
    return " ".join(str(value).replace("\\", "\\\\").replace("|", "\\|").split())


def _md_table(columns: list[str], rows: list[dict]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_md_cell(row[c]) for c in columns) + " |" for row in rows]
    return lines


class Command(UncheckedCommand):
    help = (
        "Report what the cleaner removed from each article: words, sections, share of prose lost, flags, and every "
        "block under a source heading (citation entry, agent's note or content) with the feature that decided it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", help="only this benchmark's topics")
        parser.add_argument("--format", choices=["md", "csv", "json"], default="md")

    def handle(self, *args, **options):
        articles = [_article_row(row) for row in cleaning_removals(benchmark=options["benchmark"])]
        if not articles:
            raise CommandError("no articles" + (f" in benchmark {options['benchmark']!r}" if options["benchmark"] else ""))
        systems = _system_rows(articles)
        fmt = options["format"]
        if fmt == "json":
            self.stdout.write(
                json.dumps(
                    {"systems": systems, "articles": articles},
                    ensure_ascii=False,
                    indent=2,
                )
            )
        elif fmt == "csv":
            writer = csv.DictWriter(self.stdout, fieldnames=ARTICLE_COLUMNS, lineterminator="\n")
            writer.writeheader()
            for row in articles:
                flat = {k: "; ".join(v) if isinstance(v, list) else v for k, v in row.items() if k != "decisions"}
                writer.writerow(row_safe(flat))
        else:
            self.stdout.write("\n".join(self._markdown(systems, articles)))

    def _markdown(self, systems: list[dict], articles: list[dict]) -> list[str]:
        flagged = [row for row in articles if row["flags"]]
        lines = ["# What the cleaner removed", ""]
        lines.append(
            f"Prose words: words on paragraph lines (not headings, lists, tables, reference entries or URLs). "
            f"Flagged: more than {PROSE_LOSS_LIMIT:.0%} of prose words lost, a removed section holding "
            f"{SECTION_PROSE_MIN}+ removed prose words, or a section under a reference heading kept for its "
            f"tables or prose while its citation list was removed."
        )
        lines += ["", "## Per system", ""] + _md_table(SYSTEM_COLUMNS, systems)
        lines += ["", f"## Flagged articles ({len(flagged)})", ""]
        if flagged:
            lines += [f"- {_md_cell(r['system'])} / {_md_cell(r['topic'])}: {_md_cell(r['flags'])}" for r in flagged]
        else:
            lines.append("None.")
        lines += ["", "## Blocks under source headings and agents' notes, per system", ""]
        lines.append(
            "Every block under a heading that announces sources (references, sources, notes, further reading, ...) "
            "is a citation entry or an agent's note (removed) or content (kept); agents' notes at an article's "
            "start or end are removed too. Each line: topic, the heading it sits under, what was decided and the "
            f"feature that decided it, an excerpt. At most {BLOCKS_SHOWN} per system and class here; "
            "--format json lists them all."
        )
        lines += self._blocks(systems, articles)
        columns = [c for c in ARTICLE_COLUMNS if c not in ("benchmark", "flags")]
        lines += ["", "## Per article", ""] + _md_table(columns, articles)
        return lines

    def _blocks(self, systems: list[dict], articles: list[dict]) -> list[str]:
        lines: list[str] = []
        for system in systems:
            key = system["system"]
            lines += [
                "",
                f"### {_md_cell(key)}: {system['entries_removed']} citation entries and {system['notes_removed']} agent's notes "
                f"removed, {system['blocks_kept']} blocks kept; {system['words_removed_percent']}% of "
                f"{system['words']} words removed",
            ]
            for kind, verb in ((ENTRY, "removed"), (NOTE, "removed"), (CONTENT, "kept")):
                rows = [(r, d) for r in articles if r["system"] == key for d in r["decisions"] if d["class"] == kind]
                if not rows:
                    continue
                lines += ["", f"{verb.capitalize()} as {kind} ({len(rows)}):", ""]
                for row, d in rows[:BLOCKS_SHOWN]:
                    where = f" / {_md_cell(d['heading'])}" if d["heading"] else " (start or end of the article)"
                    lines.append(f"- {_md_cell(row['topic'])}{where}: {_md_cell(d['reason'])}. «{_md_cell(d['excerpt'])}»")
                if len(rows) > BLOCKS_SHOWN:
                    lines.append(f"- … and {len(rows) - BLOCKS_SHOWN} more")
        return lines
