"""The label files themselves: their columns, times, file names, and reading and writing CSV and JSON Lines.

No database here: rows are plain dicts, read rows plain text with their line numbers.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from annotate.spreadsheet import cell_restore, cell_safe
from annotate.storable import text_problem

LABEL_COLUMNS = (
    "campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system",
    "winner_system", "rationale", "started_at", "saved_at",
)  # fmt: skip
# Written after LABEL_COLUMNS, never read: removing an annotator is the campaign's business, not a file's.
REMOVED_COLUMN = "annotator_removed"
# Added after LABEL_COLUMNS when an export holds judge rows; read as empty when a file has none.
JUDGE_COLUMNS = (
    "model",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_ms",
    "position",
    "call_id",
    "error",
)
OVERALL_COLUMNS = (
    "campaign",
    "topic",
    "rater_kind",
    "rater",
    "left_system",
    "right_system",
    "overall",
)
SPAN_COLUMNS = (
    "campaign", "topic", "rater", "left_system", "right_system", "system",
    "start", "end", "quote", "polarity", "comment", "created_at",
)  # fmt: skip
# Every call a judge made for the campaign, one row each (export only): their cost_usd sums to
# what the judges spent, retried invalid answers and failed requests included. A call with status
# "possibly_billed" was sent and never answered here (the run was killed): cost_usd is 0 and
# reserved_usd its worst case. The ids let the rows be matched with the provider's usage logs.
CALL_COLUMNS = (
    "campaign", "judge", "model", "call_id", "run_id", "unit_id", "topic", "system_a", "system_b", "a_first",
    "category", "criterion", "attempt", "status", "from_cache", "http_status", "prompt_tokens", "cached_tokens",
    "completion_tokens", "cost_usd", "reserved_usd", "latency_ms", "created_at", "error",
    "client_request_id", "provider_request_id", "response_id", "provider_batch_id",
)  # fmt: skip
FORMATS = ("csv", "jsonl")
# `rater_kind`: who gave a row's verdict.
HUMAN, JUDGE = "human", "judge"
POLARITY_NAMES = {1: "up", -1: "down"}
POLARITIES = {name: value for value, name in POLARITY_NAMES.items()}
# Free text is kept exactly as written (a quote must match the article); identifiers are trimmed.
VERBATIM = frozenset({"rationale", "quote", "comment"})


# --- times ---------------------------------------------------------------------


def iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_time(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 time") from None
    if parsed.tzinfo is None:
        raise ValueError(f"'{value}' has no time zone (end it with Z for UTC)")
    return parsed.astimezone(UTC)


def time_field(
    values: dict[str, str], name: str, errors: list[str], *, required: bool
) -> datetime | None:
    """The row's time in column `name`, or None with the reason added to `errors`."""
    if not values[name]:
        if required:
            errors.append(f"{name} is empty")
        return None
    try:
        return parse_time(values[name])
    except ValueError as exc:
        errors.append(f"{name}: {exc}")
        return None


# --- file names ----------------------------------------------------------------


def companion_paths(path: Path) -> tuple[Path, Path]:
    """Where the overall and spans files sit beside a labels file."""
    return (
        path.with_name(f"{path.stem}.overall{path.suffix}"),
        path.with_name(f"{path.stem}.spans{path.suffix}"),
    )


def calls_path(path: Path) -> Path:
    """Where the judge calls file (every billed call, export only) sits beside a labels file."""
    return path.with_name(f"{path.stem}.calls{path.suffix}")


def format_of(path: Path) -> str | None:
    ext = path.suffix.lower().lstrip(".")
    return ext if ext in FORMATS else None


# --- writing -------------------------------------------------------------------


def _csv_cell(value: object) -> object:
    # true/false as in JSON Lines rather than Python's True/False; formulas neutralized.
    if isinstance(value, bool):
        return "true" if value else "false"
    return cell_safe(value)


def rows_format(
    rows: Iterable[dict], *, fmt: str, columns: tuple[str, ...]
) -> Iterator[str]:
    """The file's text in chunks: a header and one record per row (CSV), or one object per line.

    Labels get `annotator_removed`, and the judge columns when any row is a judge's.
    """
    if columns == LABEL_COLUMNS:
        rows = list(rows)
        judges = any(row.get("rater_kind") == JUDGE for row in rows)
        columns = columns + (REMOVED_COLUMN,) + (JUDGE_COLUMNS if judges else ())
    if fmt == "csv":
        buffer = io.StringIO()
        # The default "\r\n" terminator makes the writer quote any field holding \r or \n.
        writer = csv.writer(buffer)
        writer.writerow(columns)
        for row in rows:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            # Human rows have no judge columns: empty in CSV, null in JSON Lines.
            writer.writerow([_csv_cell(row.get(c)) for c in columns])
        yield buffer.getvalue()
    else:
        for row in rows:
            yield (
                json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n"
            )


# --- reading -------------------------------------------------------------------


class LabelsFileError(Exception):
    """A whole file cannot be used: unreadable, empty, not UTF-8, or missing columns."""


@dataclass
class RowsFile:
    name: str
    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)


def rows_read(path: Path, *, columns: tuple[str, ...]) -> RowsFile:
    """Rows with their line numbers: physical lines for CSV (the header is line 1), lines for JSONL."""
    fmt = format_of(path)
    if fmt is None:
        raise LabelsFileError(f"{path}: the file name must end in .csv or .jsonl")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LabelsFileError(f"{path}: cannot be read ({exc.strerror})") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelsFileError(
            f"{path}: is not valid UTF-8 (bad byte at offset {exc.start})"
        ) from None
    if not text.strip():
        raise LabelsFileError(f"{path}: is empty")
    found = RowsFile(name=str(path))
    # A labels file may hold the judge columns; any other file has none.
    columns = columns + (JUDGE_COLUMNS if columns == LABEL_COLUMNS else ())
    if fmt == "csv":
        _read_csv(text, columns, found)
    else:
        _read_jsonl(text, columns, found)
    _drop_unstorable(found)
    return found


def _drop_unstorable(found: RowsFile) -> None:
    """Moves rows holding text no database stores (a NUL, or a lone surrogate from a JSON escape) to the problems."""
    kept = []
    for line, values in found.rows:
        bad = next(
            (
                f"{column} {problem}"
                for column, value in values.items()
                if (problem := text_problem(value))
            ),
            None,
        )
        if bad:
            found.problems.append((line, bad))
        else:
            kept.append((line, values))
    found.rows = kept


def _clean(column: str, value: str) -> str:
    return value if column in VERBATIM else value.strip()


def _read_csv(text: str, columns: tuple[str, ...], found: RowsFile) -> None:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
        missing = [c for c in columns if c not in header and c not in JUDGE_COLUMNS]
        if missing:
            raise LabelsFileError(
                f"{found.name}: missing column(s) {', '.join(missing)}; nothing was imported"
            )
        repeated = sorted({h for h in header if header.count(h) > 1 and h in columns})
        if repeated:
            raise LabelsFileError(
                f"{found.name}: column(s) {', '.join(repeated)} appear more than once"
            )
        index = {c: header.index(c) for c in columns if c in header}
        absent = {c: "" for c in columns if c not in header}
        previous = reader.line_num
        for record in reader:
            # A quoted field may span lines: a record starts on the line after the previous one ended.
            line, previous = previous + 1, reader.line_num
            if not any(value.strip() for value in record):
                continue
            if len(record) != len(header):
                found.problems.append(
                    (line, f"has {len(record)} fields; the header has {len(header)}")
                )
                continue
            found.rows.append(
                (
                    line,
                    {
                        **absent,
                        **{
                            c: _clean(c, cell_restore(record[i]))
                            for c, i in index.items()
                        },
                    },
                )
            )
    except csv.Error as exc:
        raise LabelsFileError(
            f"{found.name}:{reader.line_num}: not readable as CSV ({exc})"
        ) from None


def _read_jsonl(text: str, columns: tuple[str, ...], found: RowsFile) -> None:
    # Split on \n only: JSON text may hold a raw U+2028, which str.splitlines would break on.
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            found.problems.append((number, f"is not valid JSON ({exc.msg})"))
            continue
        except RecursionError:
            found.problems.append((number, "is not usable JSON (nested too deeply)"))
            continue
        except ValueError as exc:  # a number of thousands of digits
            found.problems.append((number, f"is not usable JSON ({exc})"))
            continue
        if not isinstance(value, dict):
            found.problems.append((number, "is not a JSON object"))
            continue
        missing = [c for c in columns if c not in value and c not in JUDGE_COLUMNS]
        if missing:
            found.problems.append((number, f"missing field(s) {', '.join(missing)}"))
            continue
        values, wrong = {}, []
        for column in columns:
            item = value.get(column)
            if item is None:
                item = ""
            if isinstance(item, bool) or not isinstance(item, (str, int)):
                wrong.append(column)
                continue
            values[column] = _clean(column, str(item))
        if wrong:
            found.problems.append((number, f"field(s) {', '.join(wrong)} must be text"))
            continue
        found.rows.append((number, values))
