"""The label files themselves: their columns, times, file names, and reading and writing CSV and JSON Lines.

No database here: rows are plain dicts, read rows plain text with their line numbers.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from common.spreadsheet import QUOTE, cell_restore, cell_safe
from common.storable import text_problem

LABEL_COLUMNS = (
    "campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system",
    "winner_system", "rationale", "started_at", "saved_at",
)  # fmt: skip
# Written after LABEL_COLUMNS, never read: removing an annotator is the campaign's business, not a file's.
REMOVED_COLUMN = "annotator_removed"
# Written last on human rows of the labels, overall and spans files, never read: whether the
# campaign showed bold and italic as plain text (its neutral emphasis option) to the annotators.
# Empty on judges' rows: judges read the markdown.
EMPHASIS_COLUMN = "neutral_emphasis"
# "false" on a human row whose display order is unknown (its left/right_system then only name the
# pair's systems); empty or "true" otherwise. Written only when some row says false.
ORDER_COLUMN = "order_known"
# The annotator's answer to the guess question, on each of the assignment's human rows: "first",
# "second" (the article shown there, as left_system/right_system give the order), "unknown" (Don't
# know) or empty (not asked or not answered). Written only when some row has one.
GUESS_COLUMN = "guess"
# Every verdict the rater found acceptable (campaigns that ask for sets, issue 40): system keys or
# tie, the winner among them, joined by "|". Written on every human row of such a campaign only.
ACCEPTABLE_COLUMN = "acceptable_systems"
SET_SEPARATOR = "|"
GUESSES = ("first", "second", "unknown")
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
# Rows of one-article criteria (checklist, rating, count): `response` names the criterion's response
# (`interchange.responses`; empty: a pairwise row), `system` the article's system and `answer` the
# answer as the protocol stores it, left_system/right_system/winner_system then empty. Written after
# `neutral_emphasis` only when an export holds such rows, so a pairwise export is unchanged.
ONE_ARTICLE_COLUMNS = ("response", "system", "answer")
# On judge rows, after the judge columns: the verdict's confidence in [0, 1] (empty: unknown; from
# logprobs or samples, judges/confidence.py), written by export_labels and read back by import_labels.
CONFIDENCE_COLUMN = "confidence"
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
    "start", "end", "quote", "polarity", "comment", "created_at", "criterion",
)  # fmt: skip
# `criterion`: the criterion a passage is evidence for (empty: a free mark); files without it are free marks.
# `step` (after `neutral_emphasis`, written only when a passage is in an agent's step): the number of the
# step of `system`'s article the passage is in, 1 for its first; its offsets count that step's text. Empty: the article's.
SPAN_STEP_COLUMN = "step"
SPAN_OPTIONAL = frozenset({"criterion", SPAN_STEP_COLUMN})
# Votes on the agents' steps (`<stem>.steps.<ext>`, campaigns that show steps): one row per (pair, rater,
# step voted); `step` numbers the steps of `system`'s article from 1, `kind` is the step's type as imported
# (checked on import when given), `vote` up or down.
STEP_VOTE_COLUMNS = (
    "campaign", "topic", "rater", "left_system", "right_system", "system", "step", "kind", "vote", "comment", "saved_at",
)  # fmt: skip
# `rater_kind` (last, written when a judge voted on steps: `run_judges --steps`): human, or judge for a
# judge's vote, whose `comment` is its reason and whose left_system/right_system name the pair it is kept on.
STEP_VOTE_OPTIONAL = frozenset({"campaign", "kind", "comment", "saved_at", "rater_kind"})
# Every call a judge made for the campaign, one row each (export only): their cost_usd sums to
# what the judges spent, retried invalid answers and failed requests included. A call with status
# "possibly_billed" was sent and never answered here (the run was killed): cost_usd is 0 and
# reserved_usd its worst case. The ids let the rows be matched with the provider's usage logs.
# `question`: "verdicts" (the rubric's criteria), or "guess" (the guess question: no category or criterion).
CALL_COLUMNS = (
    "campaign", "judge", "model", "call_id", "run_id", "unit_id", "topic", "system_a", "system_b", "a_first",
    "category", "criterion", "attempt", "status", "from_cache", "http_status", "prompt_tokens", "cached_tokens",
    "completion_tokens", "cost_usd", "reserved_usd", "latency_ms", "created_at", "error",
    "client_request_id", "provider_request_id", "response_id", "provider_batch_id", "question",
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


def time_field(values: dict[str, str], name: str, errors: list[str], *, required: bool) -> datetime | None:
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


def steps_path(path: Path) -> Path:
    """Where the votes on the agents' steps sit beside a labels file."""
    return path.with_name(f"{path.stem}.steps{path.suffix}")


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


def rows_format(rows: Iterable[dict], *, fmt: str, columns: tuple[str, ...]) -> Iterator[str]:
    """The file's text in chunks: a header and one record per row (CSV), or one object per line.

    Labels get `annotator_removed`, `order_known` when a row's display order is unknown, `guess` when a row has one, `acceptable_systems` when a row has a set, `neutral_emphasis`,
    the judge columns when any row is a judge's, and `response`, `answer` when any row is an answer about one article; overall answers and spans get `neutral_emphasis`.
    """
    if columns == LABEL_COLUMNS:
        rows = list(rows)
        judges = any(row.get("rater_kind") == JUDGE for row in rows)
        unordered = any(row.get(ORDER_COLUMN) is False for row in rows)
        guessed = any(row.get(GUESS_COLUMN) for row in rows)
        sets = any(row.get(ACCEPTABLE_COLUMN) for row in rows)
        one_article = ONE_ARTICLE_COLUMNS if any(row.get("response") for row in rows) else ()
        columns = (
            columns
            + (REMOVED_COLUMN,)
            + ((ORDER_COLUMN,) if unordered else ())
            + ((GUESS_COLUMN,) if guessed else ())
            + ((ACCEPTABLE_COLUMN,) if sets else ())
            + (EMPHASIS_COLUMN,)
            + one_article
            + ((*JUDGE_COLUMNS, CONFIDENCE_COLUMN) if judges else ())
        )
    elif columns == SPAN_COLUMNS:
        rows = list(rows)
        columns = columns + (EMPHASIS_COLUMN,) + ((SPAN_STEP_COLUMN,) if any(row.get(SPAN_STEP_COLUMN) for row in rows) else ())
    elif columns == OVERALL_COLUMNS:
        columns = columns + (EMPHASIS_COLUMN,)
    elif columns == STEP_VOTE_COLUMNS:
        rows = list(rows)
        columns = columns + (("rater_kind",) if any(row.get("rater_kind") == JUDGE for row in rows) else ())
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
            yield (json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n")


# --- reading -------------------------------------------------------------------

# A labels file from elsewhere may leave these out; they are then read as empty (a missing
# campaign: the one imported into; a missing rater_kind: human).
LABEL_OPTIONAL = frozenset(
    {
        "campaign",
        "rater_kind",
        "rationale",
        "started_at",
        "saved_at",
        ORDER_COLUMN,
        GUESS_COLUMN,
        ACCEPTABLE_COLUMN,
        CONFIDENCE_COLUMN,
        *JUDGE_COLUMNS,
        *ONE_ARTICLE_COLUMNS,
    }  # fmt: skip
)
# Delimiters a CSV file may use; the header tells which (`delimiter_of`).
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
# Read in blocks of this many bytes when checking a file's encoding.
BLOCK = 1 << 20
# What one line and one field of a labels file may hold, in characters, checked as they are read, so
# that a hostile file costs no more memory than these (a rationale is at most 5,000 characters).
MAX_LINE = 1 << 20
MAX_HEADER = 1 << 16  # a header of the 30-odd columns is a few hundred characters


class LabelsFileError(Exception):
    """A whole file cannot be used: unreadable, empty, not UTF-8, or missing columns."""


@dataclass
class RowsFile:
    """A checked file: its problems by line, and its good rows, read again from the file at each pass.

    Nothing but the problems is kept in memory, so a file of hundreds of thousands of rows costs
    no more than its largest row. `distinct` holds the values met in the columns asked for.
    """

    name: str
    problems: list[tuple[int, str]] = field(default_factory=list)
    distinct: dict[str, set[str]] = field(default_factory=dict)
    n_rows: int = 0
    delimiter: str | None = None  # CSV only
    _records: Callable[..., Iterator[tuple[int, dict[str, str] | None, str | None]]] | None = None

    @property
    def rows(self) -> Iterator[tuple[int, dict[str, str]]]:
        """(line, values) of every good row, in file order."""
        for line, values, problem in self._records():
            if problem is None:
                yield line, values


def rows_read(path: Path, *, columns: tuple[str, ...], distinct: tuple[str, ...] = ("topic", "rater")) -> RowsFile:
    """Checks a file and returns it as a `RowsFile`: lines are physical lines for CSV (the header is
    line 1), lines for JSON Lines. A CSV file may be separated by commas, semicolons, tabs or
    vertical bars (told by its header). A labels file may leave out the columns of `LABEL_OPTIONAL`."""
    fmt = format_of(path)
    if fmt is None:
        raise LabelsFileError(f"{path}: the file name must end in .csv or .jsonl")
    nul = _check_encoding(path)
    found = RowsFile(name=str(path))
    labels = columns == LABEL_COLUMNS
    spans = columns == SPAN_COLUMNS
    steps = columns == STEP_VOTE_COLUMNS
    optional = {LABEL_COLUMNS: LABEL_OPTIONAL, SPAN_COLUMNS: SPAN_OPTIONAL, STEP_VOTE_COLUMNS: STEP_VOTE_OPTIONAL}.get(columns, frozenset())
    # A labels file may hold the judge columns and the order column; a spans file its step column.
    columns = (
        columns
        + ((ORDER_COLUMN, GUESS_COLUMN, ACCEPTABLE_COLUMN, *JUDGE_COLUMNS, CONFIDENCE_COLUMN, *ONE_ARTICLE_COLUMNS) if labels else ())
        + ((SPAN_STEP_COLUMN,) if spans else ())
        + (("rater_kind",) if steps else ())
    )
    if fmt == "csv":
        found._records = _csv_records(path, columns, optional, found, check_text=nul)
    else:
        found._records = _jsonl_records(path, columns, optional)
    seen = {column: set() for column in distinct if column in columns}
    # The first pass reads only what it needs: the rows' problems and the distinct values.
    for line, values, problem in found._records(only=tuple(seen)):
        if problem is not None:
            found.problems.append((line, problem))
            continue
        found.n_rows += 1
        for column, values_seen in seen.items():
            values_seen.add(values[column])
    found.distinct = seen
    return found


def _check_encoding(path: Path) -> bool:
    """Raises LabelsFileError when the file cannot be read, is not UTF-8 or is empty; returns whether it holds a NUL byte."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, blank, nul = 0, True, False
    try:
        with path.open("rb") as handle:
            while block := handle.read(BLOCK):
                try:
                    text = decoder.decode(block)
                except UnicodeDecodeError as exc:
                    held = len(exc.object) - len(block)  # bytes of an unfinished character kept from the block before
                    raise LabelsFileError(f"{path}: is not valid UTF-8 (bad byte at offset {offset - held + exc.start})") from None
                offset += len(block)
                blank = blank and not text.lstrip("\ufeff").strip()
                nul = nul or b"\x00" in block
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                raise LabelsFileError(f"{path}: is not valid UTF-8 (bad byte at offset {offset - 1})") from None
    except OSError as exc:
        raise LabelsFileError(f"{path}: cannot be read ({exc.strerror})") from exc
    if blank:
        raise LabelsFileError(f"{path}: is empty")
    return nul


def _clean(column: str, value: str) -> str:
    return value if column in VERBATIM else value.strip()


def _unstorable(values: dict[str, str]) -> str | None:
    """The first value holding text no database stores (a NUL, or a lone surrogate from a JSON escape), as a problem."""
    return next((f"{column} {problem}" for column, value in values.items() if (problem := text_problem(value))), None)


def delimiter_of(header_line: str, columns: tuple[str, ...]) -> tuple[str, str | None]:
    """(the delimiter, None) that splits the header into the most expected columns, or (",", a message)
    when none gives any, naming the character that seems to separate the header instead."""
    best, best_found = ",", 0
    for delimiter in DELIMITERS:
        names = {h.strip() for h in next(csv.reader([header_line], delimiter=delimiter), [])}
        found = len(names & set(columns))
        if found > best_found:
            best, best_found = delimiter, found
    if best_found:
        return best, None
    punctuation = [c for c in header_line if not (c.isalnum() or c in "_ \"'\r\n\ufeff")]
    if punctuation:
        common = max(dict.fromkeys(punctuation), key=punctuation.count)
        return ",", (
            f"its header seems separated by {common!r}, which is not a delimiter this import reads "
            f"(it reads {', '.join(f'{name} ({d!r})' for d, name in DELIMITERS.items())})"
        )
    return ",", None


def bounded_lines(handle, name: str, *, limit: int = MAX_LINE) -> Iterator[str]:
    """The handle's lines, each read with at most `limit` characters held: a longer line stops the
    file with a LabelsFileError naming it (`file:line`), before the rest of it is read."""
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line) > limit:
            raise LabelsFileError(
                f"{name}:{number}: the line is longer than {limit:,} characters (the limit of a line); nothing was imported"
            )
        yield line


def _csv_records(path: Path, columns: tuple[str, ...], optional: frozenset, found: RowsFile, *, check_text: bool):
    """Checks the header, then gives a function that yields (line, values, None) or (line, None, problem) per record."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        header_line = handle.readline(MAX_HEADER + 1)
    if len(header_line) > MAX_HEADER:
        raise LabelsFileError(f"{found.name}:1: the header is longer than {MAX_HEADER:,} characters; nothing was imported")
    delimiter, wrong = delimiter_of(header_line, columns)
    found.delimiter = delimiter
    header = [h.strip() for h in next(csv.reader([header_line], delimiter=delimiter), [])]
    missing = [c for c in columns if c not in header and c not in optional]
    if missing:
        hint = f" ({wrong})" if wrong else ""
        raise LabelsFileError(f"{found.name}: missing column(s) {', '.join(missing)}{hint}; nothing was imported")
    repeated = sorted({h for h in header if header.count(h) > 1 and h in columns})
    if repeated:
        raise LabelsFileError(f"{found.name}: column(s) {', '.join(repeated)} appear more than once")
    index = [(c, header.index(c)) for c in columns if c in header]
    verbatim = [(c, i, c in VERBATIM) for c, i in index]
    absent = {c: "" for c in columns if c not in header}
    width = len(header)

    def records(only: tuple[str, ...] | None = None):
        """`only`: the columns wanted (the others are left out of the values)."""
        wanted = verbatim if only is None else [(c, i, keep) for c, i, keep in verbatim if c in only]
        blank = absent if only is None else {c: "" for c in only if c in absent}
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(bounded_lines(handle, found.name), delimiter=delimiter)
            try:
                next(reader)
                previous = reader.line_num
                for record in reader:
                    # A quoted field may span lines: a record starts on the line after the previous one ended.
                    line, previous = previous + 1, reader.line_num
                    if not any(value.strip() for value in record):
                        continue
                    if len(record) != width:
                        yield line, None, f"has {len(record)} fields; the header has {width}"
                        continue
                    if check_text and (problem := _unstorable({c: record[i] for c, i in index})):
                        yield line, None, problem
                        continue
                    values = dict(blank)
                    for column, i, keep in wanted:
                        value = record[i]
                        if value[:1] == QUOTE:
                            value = cell_restore(value)
                        values[column] = value if keep else value.strip()
                    yield line, values, None
            except csv.Error as exc:
                raise LabelsFileError(f"{found.name}:{reader.line_num}: not readable as CSV ({exc})") from None

    return records


def _jsonl_records(path: Path, columns: tuple[str, ...], optional: frozenset):
    def records(only: tuple[str, ...] | None = None):
        # Lines end at \n only: JSON text may hold a raw U+2028, which str.splitlines would break on.
        with path.open(encoding="utf-8-sig", newline="\n") as handle:
            for number, raw in enumerate(bounded_lines(handle, str(path)), 1):
                if not raw.strip():
                    continue
                values, problem = _jsonl_values(raw, columns, optional)
                yield number, values, problem

    return records


def _jsonl_values(raw: str, columns: tuple[str, ...], optional: frozenset) -> tuple[dict | None, str | None]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"is not valid JSON ({exc.msg})"
    except RecursionError:
        return None, "is not usable JSON (nested too deeply)"
    except ValueError as exc:  # a number of thousands of digits
        return None, f"is not usable JSON ({exc})"
    if not isinstance(value, dict):
        return None, "is not a JSON object"
    missing = [c for c in columns if c not in value and c not in optional]
    if missing:
        return None, f"missing field(s) {', '.join(missing)}"
    values, wrong = {}, []
    for column in columns:
        item = value.get(column)
        if item is None:
            item = ""
        if isinstance(item, bool) and column == ORDER_COLUMN:
            item = "true" if item else "false"
        if isinstance(item, float) and column == CONFIDENCE_COLUMN:
            item = repr(item)  # a probability, as export_labels writes it in JSON Lines
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            wrong.append(column)
            continue
        values[column] = _clean(column, str(item))
    if wrong:
        return None, f"field(s) {', '.join(wrong)} must be text"
    if problem := _unstorable(values):
        return None, problem
    return values, None
