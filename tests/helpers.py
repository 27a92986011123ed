"""Builders for on-disk inputs and a runner for management commands."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import CommandError


@dataclass
class CommandResult:
    code: int
    out: str
    err: str


def run(name: str, *args: str) -> CommandResult:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(name, *args, stdout=out, stderr=err)
    except CommandError as exc:
        err.write(f"CommandError: {exc}\n")
        return CommandResult(exc.returncode, out.getvalue(), err.getvalue())
    return CommandResult(0, out.getvalue(), err.getvalue())


# The label export's header as its contract fixes it (`interchange/formats.py`), written
# out here so that a change to the code's columns fails the tests that compare against it: the long
# format's columns and annotator_removed, then neutral_emphasis in an export of human labels only.
LABEL_HEADER = (
    "campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system",
    "winner_system", "rationale", "started_at", "saved_at", "annotator_removed",
)  # fmt: skip
HUMAN_LABEL_HEADER = (*LABEL_HEADER, "neutral_emphasis")


RUBRIC = {
    "name": "Tiny rubric",
    "categories": [
        {
            "id": "well_written",
            "name": "Well-written",
            "subcategories": [
                {"id": "clear_concise", "name": "Clear", "criteria": [{"id": "ww_cc_1", "text": "Plain sentences."}]},
                {
                    "id": "words_to_watch",
                    "name": "Words",
                    "criteria": [{"id": "ww_wtw_1", "text": "No boasting.", "watch_class": "puffery"}],
                },
            ],
        },
        {"id": "neutral", "name": "Neutral", "criteria": [{"id": "n_1", "text": "Fair to every side."}]},
    ],
}


def article(title: str, body: str) -> str:
    return f"# {title}\n\n{body}\n"


def write_wlc(
    root: Path,
    *,
    benchmark: str = "2025_test",
    topics: dict[str, str] | None = None,
    systems: dict[str, dict[str, str]] | None = None,
    rubric: dict | None = RUBRIC,
    categories: dict[str, str] | None = None,
) -> Path:
    """Writes a small repository in the Wiki Live Challenge layout.

    `topics` maps a reference file stem to its markdown; `systems` maps a
    system folder to {file stem: markdown}.
    """
    topics = (
        topics
        if topics is not None
        else {
            "Red_Fox": article("Red Fox", "The red fox lives in many habitats."),
            "Blue_Lake": article("Blue Lake", "Blue Lake is a cold lake."),
        }
    )
    systems = (
        systems
        if systems is not None
        else {
            "agent_a": {
                "Red_Fox": article("Red Fox", "Foxes hunt at night [1].\n\n## References\n[1] https://example.org/fox"),
                "Blue_Lake": article("Blue Lake", "A lake (https://example.org/lake) that is blue."),
            },
        }
    )
    bench = root / "data" / benchmark
    article_dir = bench / "wiki_data" / "cleaned_data" / "article"
    article_dir.mkdir(parents=True)
    for stem, text in topics.items():
        (article_dir / f"{stem}.md").write_text(text, encoding="utf-8")
    if categories is not None:
        lines = ["title,url,category"] + [f'"{t}",https://example.org/{i},"{c}"' for i, (t, c) in enumerate(categories.items())]
        (bench / "wiki_data" / "ga_100.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    test_dir = bench / "test_data"
    test_dir.mkdir()
    agencies = {key: {"name": key.replace("_", " ").title(), "description": f"{key} agent"} for key in systems}
    (test_dir / "agencies.json").write_text(json.dumps({"agencies": agencies}), encoding="utf-8")
    for key, files in systems.items():
        md_dir = test_dir / key / "md_data"
        md_dir.mkdir(parents=True)
        for stem, text in files.items():
            (md_dir / f"{stem}.md").write_text(text, encoding="utf-8")
    if rubric is not None:
        eval_dir = root / "evaluation" / "data"
        eval_dir.mkdir(parents=True)
        (eval_dir / "wiki_writing_criteria.json").write_text(json.dumps(rubric), encoding="utf-8")
    return root


def csv_file(path: Path, rows: list[dict], columns) -> Path:
    """Writes `rows` as a CSV file with the header `columns` (a labels file, say); returns `path`."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


# The JSON-schema keywords of the strict structured-output subset that hosted providers accept
# (OpenAI's "strict": true, and the endpoints that mimic it); an answer schema using any other
# keyword is refused there or silently loosened.
STRICT_SCHEMA_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description",
     "minItems", "maxItems", "minimum", "maximum", "const"}
)  # fmt: skip


def strict_subset_problems(schema: dict, path: str = "$") -> list[str]:
    """Where `schema` leaves the strict subset: an unknown keyword, an object without
    additionalProperties false, or a property that is not required."""
    problems = [f"{path}: keyword {key!r}" for key in schema if key not in STRICT_SCHEMA_KEYWORDS]
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties is not false")
        if sorted(schema.get("required", [])) != sorted(schema.get("properties", {})):
            problems.append(f"{path}: not every property is required")
        for name, inner in schema.get("properties", {}).items():
            problems += strict_subset_problems(inner, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        problems += strict_subset_problems(schema["items"], f"{path}[]")
    for number, inner in enumerate(schema.get("anyOf", [])):
        problems += strict_subset_problems(inner, f"{path}|{number}")
    return problems
