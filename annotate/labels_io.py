"""Labels in long, tidy format: export rows, reading label files, and the import service.

Three files travel together, `<stem>.<ext>`, `<stem>.overall.<ext>` and
`<stem>.spans.<ext>`, as CSV or JSON Lines:

* labels: one row per (pair, criterion, rater). Only labels that name a winner
  are exported, whatever the assignment's status (in progress, submitted or
  expired): a criterion the rater has not decided has no row. Judges' rows
  (`rater_kind` judge, `rater` the judge's name) follow the humans': one per
  (pair, criterion, order shown) the judge has finished, either a verdict or, for
  a unit in error, a row with an empty `winner_system` and the `error`. They fill
  the judge columns (`model`, the call's `prompt_tokens`, `completion_tokens`,
  `cost_usd`, `latency_ms` with its `call_id`, so that sums are taken over
  distinct calls, and `position`, "1"/"2" as shown, "" for a tie). These columns
  are written only when the export holds judge rows (human rows leave them
  empty), so a humans-only export keeps its twelve columns; files without them
  are read as before. `annotator_removed` (after `saved_at`, true/false, empty
  for judges) flags labels whose rater was later removed from the campaign; the
  import ignores it, so files with or without it are read alike.
* overall: one row per (pair, rater) that answered the overall question.
* spans: one row per marked passage.

`left_system` / `right_system` are the systems that rater saw as Article 1 /
Article 2, and every verdict names a system (or `tie` / `both_bad`), never a
position. Times are ISO 8601 in UTC with a trailing `Z`, microseconds kept, so a
round trip gives back the same text. `started_at` is when the rater first opened
the pair (when they claimed it if they never opened it).

Importing validates every row before writing anything, and writes in one
transaction: with any bad row nothing is imported, unless `skip_bad`. Each
(pair, rater) becomes a submitted assignment; the campaign's rationale rules are
not applied to imported work (external raters may not write rationales). Labels
and the overall answer are updated in place; spans are only added, a row equal
to a stored span counting as unchanged, so importing the same files twice
changes nothing.

CSV cells are written through `annotate.spreadsheet.cell_safe`: text a
spreadsheet would run as a formula (starting with =, +, -, @, tab or CR) gets a
leading `'`, which reading a CSV takes off again, so the round trip keeps the
text exactly. JSON Lines keep the raw text.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotate.campaigns import MAX_COMMENT, MAX_RATIONALE
from annotate.models import (
    Article,
    Assignment,
    Campaign,
    Criterion,
    Label,
    LabelChange,
    Pair,
    Span,
    System,
    Topic,
)
from annotate.rendering import plain_text
from annotate.sources import Problem
from annotate.spreadsheet import cell_restore, cell_safe
from annotate.storable import text_problem
from judges.models import Judge, JudgeCall, JudgeUnit, JudgeVerdict

LABEL_COLUMNS = (
    "campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system",
    "winner_system", "rationale", "started_at", "saved_at",
)
# Written after LABEL_COLUMNS, never read: removing an annotator is the campaign's business, not a file's.
REMOVED_COLUMN = "annotator_removed"
# Added after LABEL_COLUMNS when an export holds judge rows; read as empty when a file has none.
JUDGE_COLUMNS = ("model", "prompt_tokens", "completion_tokens", "cost_usd", "latency_ms", "position", "call_id", "error")
OVERALL_COLUMNS = ("campaign", "topic", "rater_kind", "rater", "left_system", "right_system", "overall")
SPAN_COLUMNS = (
    "campaign", "topic", "rater", "left_system", "right_system", "system",
    "start", "end", "quote", "polarity", "comment", "created_at",
)
FORMATS = ("csv", "jsonl")
HUMAN, JUDGE = "human", "judge"
TIE, BOTH_BAD = "tie", "both_bad"
POLARITY_NAMES = {1: "up", -1: "down"}
POLARITIES = {name: value for value, name in POLARITY_NAMES.items()}
# Free text is kept exactly as written (a quote must match the article); identifiers are trimmed.
VERBATIM = frozenset({"rationale", "quote", "comment"})
USERNAME = re.compile(r"[\w.@+-]{1,150}")
JUDGE_NAME = re.compile(r"[-a-zA-Z0-9_]{1,100}")
# Offsets: 18 digits are far beyond any article, and int() of thousands of digits raises.
DIGITS = re.compile(r"[0-9]{1,18}")


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


# --- export --------------------------------------------------------------------


def _sides(assignment: Assignment) -> tuple[Article, Article]:
    pair = assignment.pair
    return (pair.article_a, pair.article_b) if assignment.a_on_left else (pair.article_b, pair.article_a)


def _order(assignment: Assignment) -> tuple:
    # By topic, then the pair's systems in name order, then rater: independent of the
    # campaign's shuffled pair order, so two campaigns with the same work export alike.
    pair = assignment.pair
    systems = sorted((pair.article_a.system.key, pair.article_b.system.key))
    return (pair.topic.title, pair.topic_id, *systems, assignment.annotator.username)


def _head(assignment: Assignment) -> dict:
    left, right = _sides(assignment)
    return {
        "campaign": assignment.pair.campaign.name,
        "topic": assignment.pair.topic.title,
        "rater": assignment.annotator.username,
        "left_system": left.system.key,
        "right_system": right.system.key,
    }


_ASSIGNMENT_JOINS = (
    "pair__campaign", "pair__topic", "pair__article_a__system", "pair__article_b__system", "annotator",
)


def label_rows(campaign: Campaign) -> list[dict]:
    labels = (
        Label.objects.filter(assignment__pair__campaign=campaign)
        .exclude(winner="")
        .select_related("criterion", *(f"assignment__{join}" for join in _ASSIGNMENT_JOINS))
    )
    removed = set(campaign.removed_annotators.values_list("pk", flat=True))
    rows = []
    for label in sorted(labels, key=lambda l: (_order(l.assignment), l.criterion.order, l.criterion.key)):
        assignment = label.assignment
        head = _head(assignment)
        if label.winner == Label.Winner.TIE:
            winner = TIE
        elif label.winner == Label.Winner.A:
            winner = assignment.pair.article_a.system.key
        else:
            winner = assignment.pair.article_b.system.key
        rows.append({
            "campaign": head["campaign"],
            "topic": head["topic"],
            "criterion": label.criterion.key,
            "rater_kind": HUMAN,
            "rater": head["rater"],
            "left_system": head["left_system"],
            "right_system": head["right_system"],
            "winner_system": winner,
            "rationale": label.rationale,
            "started_at": iso(assignment.first_opened_at or assignment.claimed_at),
            "saved_at": iso(label.saved_at),
            REMOVED_COLUMN: assignment.annotator_id in removed,
        })
    return rows + judge_label_rows(campaign)


def _call_columns(call: JudgeCall | None) -> dict:
    if call is None:
        return {"prompt_tokens": None, "completion_tokens": None, "cost_usd": None, "latency_ms": None, "call_id": None}
    return {
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cost_usd": f"{call.cost_usd:.8f}",
        "latency_ms": call.latency_ms,
        "call_id": call.id,
    }


def judge_label_rows(campaign: Campaign) -> list[dict]:
    """A verdict or an error row for every (pair, criterion, order) of every finished judge unit."""
    units = list(
        JudgeUnit.objects.filter(pair__campaign=campaign)
        .exclude(status=JudgeUnit.Status.PENDING)
        .select_related("judge", "pair__topic", "pair__article_a__system", "pair__article_b__system")
    )
    verdicts: dict[int, dict[int, JudgeVerdict]] = {}
    for verdict in JudgeVerdict.objects.filter(unit__in=units).select_related("call"):
        verdicts.setdefault(verdict.unit_id, {})[verdict.criterion_id] = verdict
    last_calls: dict[int, JudgeCall] = {}
    for call in JudgeCall.objects.filter(unit__in=[u for u in units if u.status == JudgeUnit.Status.ERROR]).order_by("id"):
        last_calls[call.unit_id] = call
    criteria = list(campaign.criterion_set.criteria.order_by("order", "id"))
    by_category: dict[int, list[Criterion]] = {}
    for criterion in criteria:
        by_category.setdefault(criterion.category_id, []).append(criterion)
    by_id = {c.id: c for c in criteria}

    def order(unit: JudgeUnit) -> tuple:
        pair = unit.pair
        systems = sorted((pair.article_a.system.key, pair.article_b.system.key))
        return (pair.topic.title, pair.topic_id, *systems, unit.judge.name, not unit.a_first)

    rows = []
    for unit in sorted(units, key=order):
        pair = unit.pair
        left, right = (pair.article_a, pair.article_b) if unit.a_first else (pair.article_b, pair.article_a)
        sides = {"a": pair.article_a.system.key, "b": pair.article_b.system.key, TIE: TIE}
        head = {
            "campaign": campaign.name,
            "topic": pair.topic.title,
            "rater_kind": JUDGE,
            "rater": unit.judge.name,
            "left_system": left.system.key,
            "right_system": right.system.key,
            "started_at": "",
            "saved_at": iso(unit.updated_at),
            "model": unit.judge.model,
        }
        found = verdicts.get(unit.id, {})
        for criterion in [by_id[unit.criterion_id]] if unit.criterion_id else by_category.get(unit.category_id, []):
            verdict = found.get(criterion.id)
            if verdict is not None:
                winner = sides[verdict.winner]
                position = "" if winner == TIE else ("1" if winner == left.system.key else "2")
                rows.append({**head, "criterion": criterion.key, "winner_system": winner, "rationale": verdict.reason,
                             **_call_columns(verdict.call), "position": position, "error": ""})
            elif unit.status == JudgeUnit.Status.ERROR:
                rows.append({**head, "criterion": criterion.key, "winner_system": "", "rationale": "",
                             **_call_columns(last_calls.get(unit.id)), "position": "", "error": unit.error or "error"})
    return rows


def overall_rows(campaign: Campaign) -> list[dict]:
    assignments = Assignment.objects.filter(pair__campaign=campaign).exclude(overall="").select_related(*_ASSIGNMENT_JOINS)
    rows = []
    for assignment in sorted(assignments, key=_order):
        head = _head(assignment)
        overall = {"1": head["left_system"], "2": head["right_system"]}.get(assignment.overall, assignment.overall)
        rows.append({**head, "rater_kind": HUMAN, "overall": overall})
    return rows


def span_rows(campaign: Campaign) -> list[dict]:
    spans = Span.objects.filter(assignment__pair__campaign=campaign).select_related(
        "article__system", *(f"assignment__{join}" for join in _ASSIGNMENT_JOINS)
    )
    rows = []
    for span in sorted(spans, key=lambda s: (_order(s.assignment), s.created_at, s.id)):
        rows.append({
            **_head(span.assignment),
            "system": span.article.system.key,
            "start": span.start,
            "end": span.end,
            "quote": span.quote,
            "polarity": POLARITY_NAMES[span.polarity],
            "comment": span.comment,
            "created_at": iso(span.created_at),
        })
    return rows


def _optional(columns: tuple[str, ...]) -> tuple[str, ...]:
    return JUDGE_COLUMNS if columns == LABEL_COLUMNS else ()


def _csv_cell(value: object) -> object:
    # true/false as in JSON Lines rather than Python's True/False; formulas neutralized.
    if isinstance(value, bool):
        return "true" if value else "false"
    return cell_safe(value)


def rows_format(rows: Iterable[dict], *, fmt: str, columns: tuple[str, ...]) -> Iterator[str]:
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
            yield json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n"


def companion_paths(path: Path) -> tuple[Path, Path]:
    """Where the overall and spans files sit beside a labels file."""
    return (path.with_name(f"{path.stem}.overall{path.suffix}"), path.with_name(f"{path.stem}.spans{path.suffix}"))


def format_of(path: Path) -> str | None:
    ext = path.suffix.lower().lstrip(".")
    return ext if ext in FORMATS else None


# --- reading files -------------------------------------------------------------


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
        raise LabelsFileError(f"{path}: is not valid UTF-8 (bad byte at offset {exc.start})") from None
    if not text.strip():
        raise LabelsFileError(f"{path}: is empty")
    found = RowsFile(name=str(path))
    columns = columns + _optional(columns)
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
        bad = next((f"{column} {problem}" for column, value in values.items() if (problem := text_problem(value))), None)
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
            raise LabelsFileError(f"{found.name}: missing column(s) {', '.join(missing)}; nothing was imported")
        repeated = sorted({h for h in header if header.count(h) > 1 and h in columns})
        if repeated:
            raise LabelsFileError(f"{found.name}: column(s) {', '.join(repeated)} appear more than once")
        index = {c: header.index(c) for c in columns if c in header}
        absent = {c: "" for c in columns if c not in header}
        previous = reader.line_num
        for record in reader:
            # A quoted field may span lines: a record starts on the line after the previous one ended.
            line, previous = previous + 1, reader.line_num
            if not any(value.strip() for value in record):
                continue
            if len(record) != len(header):
                found.problems.append((line, f"has {len(record)} fields; the header has {len(header)}"))
                continue
            found.rows.append((line, {**absent, **{c: _clean(c, cell_restore(record[i])) for c, i in index.items()}}))
    except csv.Error as exc:
        raise LabelsFileError(f"{found.name}:{reader.line_num}: not readable as CSV ({exc})") from None


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


# --- import --------------------------------------------------------------------


@dataclass
class ImportReport:
    problems: list[Problem] = field(default_factory=list)
    bad_rows: int = 0
    imported: bool = False
    raters_created: int = 0
    pairs_created: int = 0
    assignments: dict[str, int] = field(default_factory=lambda: {"new": 0, "updated": 0, "unchanged": 0})
    labels: dict[str, int] = field(default_factory=lambda: {"new": 0, "updated": 0, "unchanged": 0})
    overall: dict[str, int] | None = None
    spans: dict[str, int] | None = None
    judges_created: int = 0
    judge_units: dict[str, int] | None = None

    @property
    def changed(self) -> bool:
        tallies = [self.assignments, self.labels, self.overall or {}, self.spans or {}, self.judge_units or {}]
        return bool(
            self.raters_created or self.pairs_created or self.judges_created or any(t.get("new") or t.get("updated") for t in tallies)
        )

    def lines(self) -> list[str]:
        def tally(name: str, counts: dict[str, int]) -> str:
            return f"{name}: " + ", ".join(f"{n} {what}" for what, n in counts.items())

        lines = [tally("labels", self.labels)]
        if self.overall is not None:
            lines.append(tally("overall", self.overall))
        if self.spans is not None:
            lines.append(tally("spans", self.spans))
        lines.append(tally("assignments", self.assignments))
        if self.judge_units is not None:
            lines.append(tally("judge units (pair, order, category)", self.judge_units) + f"; judges created: {self.judges_created}")
        lines.append(f"pairs created: {self.pairs_created}; rater accounts created: {self.raters_created}")
        if not self.changed:
            lines.append("unchanged: everything in the file(s) was already stored")
        return lines


@dataclass(frozen=True)
class _Target:
    """Whose work a row belongs to: one rater on one pair, with the order they saw."""

    topic: Topic
    left: Article
    right: Article
    rater: str

    @property
    def pair_key(self) -> frozenset[int]:
        return frozenset((self.left.id, self.right.id))

    @property
    def key(self) -> tuple[frozenset[int], str]:
        return (self.pair_key, self.rater)


@dataclass
class _Plan:
    """An assignment to create or update from the labels file."""

    target: _Target
    line: int
    started_at: datetime | None
    labels: list[tuple[Criterion, str, str, datetime]] = field(default_factory=list)


class _Context:
    """Everything the rows refer to, loaded once before validating."""

    def __init__(self, campaign: Campaign, files: list[RowsFile]) -> None:
        self.campaign = campaign
        rows = [values for f in files for _, values in f.rows]
        self.criteria = {c.key: c for c in campaign.criterion_set.criteria.all()}
        self.systems = {s.key: s for s in System.objects.all()}
        self.pairs = {
            frozenset((p.article_a_id, p.article_b_id)): p
            for p in campaign.pairs.select_related("article_a__system", "article_b__system")
        }
        campaign_topics = {p.topic_id for p in self.pairs.values()}
        self.topics: dict[str, list[Topic]] = {}
        for topic in Topic.objects.filter(title__in={r["topic"] for r in rows}).order_by("id"):
            self.topics.setdefault(topic.title, []).append(topic)
        for title, topics in self.topics.items():
            inside = [t for t in topics if t.id in campaign_topics]
            self.topics[title] = inside or topics
        self.articles = {
            (a.topic_id, a.system.key): a
            for a in Article.objects.filter(topic__in=[t for ts in self.topics.values() for t in ts]).select_related("system")
        }
        self.users = {u.username: u for u in User.objects.filter(username__in={r["rater"] for r in rows})}
        self.assignments = {
            (a.pair_id, a.annotator_id): a
            for a in Assignment.objects.filter(pair__campaign=campaign, annotator__in=self.users.values())
        }
        self._texts: dict[int, str] = {}

    def text(self, article: Article) -> str:
        if article.id not in self._texts:
            self._texts[article.id] = plain_text(article.html)
        return self._texts[article.id]

    def stored(self, target: _Target) -> Assignment | None:
        pair, user = self.pairs.get(target.pair_key), self.users.get(target.rater)
        if pair is None or user is None:
            return None
        return self.assignments.get((pair.id, user.id))

    def resolve(self, values: dict[str, str], errors: list[str], *, judges: bool = False) -> _Target | None:
        """The rater and pair a row is about, checking the columns every file shares.

        Judge rows are accepted only where `judges` (the labels file): judges give no
        overall answer and mark no spans.
        """
        campaign = self.campaign
        before = len(errors)
        if values["campaign"] != campaign.name:
            errors.append(f"campaign is '{values['campaign']}', not '{campaign.name}'")
        kind = values.get("rater_kind", HUMAN)
        rater = values["rater"]
        if kind == JUDGE and not judges:
            errors.append("judge verdicts are not supported in overall and spans files (judges only give labels)")
        elif kind == JUDGE:
            if not JUDGE_NAME.fullmatch(rater):
                errors.append(f"judge name '{rater}' is not valid (letters, digits, - and _, at most 100)")
        elif kind != HUMAN:
            errors.append(f"rater_kind must be '{HUMAN}', not '{kind}' (or '{JUDGE}' for a judge's verdicts)")
        elif not USERNAME.fullmatch(rater):
            errors.append(f"rater '{rater}' is not a valid username (letters, digits and @.+-_, at most 150)")
        topic = None
        candidates = self.topics.get(values["topic"], [])
        if not candidates:
            errors.append(f"unknown topic '{values['topic']}'")
        elif len(candidates) > 1:
            errors.append(f"topic '{values['topic']}' is ambiguous: {len(candidates)} benchmarks have a topic with that title")
        else:
            topic = candidates[0]
        left_key, right_key = values["left_system"], values["right_system"]
        for key in dict.fromkeys((left_key, right_key)):
            if key not in self.systems:
                errors.append(f"unknown system '{key}'")
        if left_key == right_key:
            errors.append(f"left_system and right_system are both '{left_key}'")
        if len(errors) > before or topic is None:
            return None
        left, right = self.articles.get((topic.id, left_key)), self.articles.get((topic.id, right_key))
        for key, article in ((left_key, left), (right_key, right)):
            if article is None:
                errors.append(f"no article by '{key}' on topic '{topic.title}'")
        if left is None or right is None:
            return None
        target = _Target(topic=topic, left=left, right=right, rater=rater)
        reference = campaign.reference_system
        if (
            target.pair_key not in self.pairs
            and campaign.pair_mode == Campaign.PairMode.REFERENCE
            and reference is not None
            and reference.key not in (left_key, right_key)
        ):
            errors.append(f"this campaign pairs '{reference.key}' with each system; '{left_key}' vs '{right_key}' is not such a pair")
            return None
        return target


def _order_matches(context: _Context, plans: dict, target: _Target, errors: list[str], what: str) -> None:
    """Overall answers and spans belong to an assignment from the labels file or already stored."""
    plan = plans.get(target.key)
    if plan is not None:
        if plan.target.left != target.left:
            errors.append(f"left_system and right_system are swapped compared with the labels (labels file line {plan.line})")
        return
    stored = context.stored(target)
    if stored is None:
        errors.append(f"no labels for this rater and pair, in the labels file or stored: {what} needs them")
        return
    pair = context.pairs[target.pair_key]
    if (pair.article_a_id if stored.a_on_left else pair.article_b_id) != target.left.id:
        errors.append("left_system and right_system are swapped compared with the stored assignment")


def _check_labels(context: _Context, rows_file: RowsFile, report: ImportReport) -> tuple[dict, dict]:
    campaign = context.campaign
    plans: dict[tuple, _Plan] = {}
    judge_plans: dict[tuple, _JudgePlan] = {}
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        if values.get("rater_kind") == JUDGE:
            _check_judge_row(context, line, values, judge_plans, seen, bad)
            continue
        errors: list[str] = []
        target = context.resolve(values, errors)
        criterion = context.criteria.get(values["criterion"])
        if criterion is None:
            errors.append(f"unknown criterion '{values['criterion']}' (not in {campaign.criterion_set})")
        winner = values["winner_system"]
        if winner == "":
            errors.append("winner_system is empty (leave out criteria without a verdict)")
        elif winner == TIE:
            if not campaign.allow_tie:
                errors.append("this campaign does not allow ties")
        elif winner not in (values["left_system"], values["right_system"]):
            errors.append(f"winner_system '{winner}' is neither left_system, right_system nor tie")
        if len(values["rationale"]) > MAX_RATIONALE:
            errors.append(f"rationale is longer than {MAX_RATIONALE} characters")
        saved_at = time_field(values, "saved_at", errors, required=True)
        started_at = time_field(values, "started_at", errors, required=False)
        plan = plans.get(target.key) if target else None
        if target is not None and criterion is not None and (target.key, criterion.key) in seen:
            errors.append(f"repeats line {seen[target.key, criterion.key]} (same pair, criterion and rater)")
        if plan is not None:
            if plan.target.left != target.left:
                errors.append(f"left_system and right_system are swapped compared with line {plan.line} (same pair and rater)")
            if values["started_at"] and plan.started_at != started_at:
                errors.append(f"started_at differs from line {plan.line} (same pair and rater)")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[target.key, criterion.key] = line
        if plan is None:
            plan = plans[target.key] = _Plan(target=target, line=line, started_at=started_at)
        if winner == TIE:
            side = Label.Winner.TIE
        else:
            side = Label.Winner.A if _canonical(context, target)[0].system.key == winner else Label.Winner.B
        plan.labels.append((criterion, side, values["rationale"], saved_at))
    _record(report, rows_file, bad)
    return plans, judge_plans


@dataclass
class _JudgePlan:
    """A judge's verdicts (or errors) on one pair in one order, from the labels file."""

    target: _Target
    a_first: bool
    model: str
    rows: list[tuple[Criterion, str | None, str, str]] = field(default_factory=list)


def _check_judge_row(context: _Context, line: int, values: dict[str, str], plans: dict, seen: dict, bad: list) -> None:
    errors: list[str] = []
    target = context.resolve(values, errors, judges=True)
    criterion = context.criteria.get(values["criterion"])
    if criterion is None:
        errors.append(f"unknown criterion '{values['criterion']}' (not in {context.campaign.criterion_set})")
    winner, error = values["winner_system"], values["error"].strip()
    if winner == "":
        if not error:
            errors.append("winner_system is empty and error is empty (a judge row has one or the other)")
    elif error:
        errors.append("a judge row has either a winner_system or an error, not both")
    elif winner == TIE:
        if not context.campaign.allow_tie:
            errors.append("this campaign does not allow ties")
    elif winner not in (values["left_system"], values["right_system"]):
        errors.append(f"winner_system '{winner}' is neither left_system, right_system nor tie")
    if len(values["rationale"]) > MAX_RATIONALE:
        errors.append(f"rationale is longer than {MAX_RATIONALE} characters")
    time_field(values, "saved_at", errors, required=False)
    identity = None
    if target is not None and criterion is not None:
        identity = (JUDGE, target.key, target.left.id, criterion.key)
        if identity in seen:
            errors.append(f"repeats line {seen[identity]} (same pair, order, criterion and judge)")
    if errors:
        bad += [(line, message) for message in errors]
        return
    seen[identity] = line
    article_a = _canonical(context, target)[0]
    a_first = target.left.id == article_a.id
    plan = plans.get((target.key, a_first))
    if plan is None:
        plan = plans[target.key, a_first] = _JudgePlan(target=target, a_first=a_first, model=values["model"])
    if winner == "":
        side = None
    elif winner == TIE:
        side = TIE
    else:
        side = "a" if winner == article_a.system.key else "b"
    plan.rows.append((criterion, side, values["rationale"], error))


def _write_judges(context: _Context, plans: dict, report: ImportReport, now: datetime) -> None:
    """Each judge row becomes a verdict (or the error) of an imported unit; missing judges are created as imported."""
    names = {plan.target.rater for plan in plans.values()}
    judges = {j.name: j for j in Judge.objects.filter(name__in=names)}
    for name in sorted(names - set(judges)):
        model = next((p.model for p in plans.values() if p.target.rater == name and p.model), "")
        judges[name] = Judge.objects.create(name=name, kind=Judge.Kind.IMPORTED, model=model)
        report.judges_created += 1
    next_order = (context.campaign.pairs.aggregate(top=Max("order"))["top"] or 0) + 1
    for plan in plans.values():
        target, judge = plan.target, judges[plan.target.rater]
        pair = context.pairs.get(target.pair_key)
        if pair is None:
            article_a, article_b = _canonical(context, target)
            pair = Pair.objects.create(campaign=context.campaign, topic=target.topic, article_a=article_a, article_b=article_b, order=next_order)
            context.pairs[target.pair_key] = pair
            next_order += 1
            report.pairs_created += 1
        units: dict[tuple, list] = {}
        for criterion, side, rationale, error in plan.rows:
            one = criterion if judge.mode == Judge.Mode.CRITERION else None
            units.setdefault((criterion.category_id, one), []).append((criterion, side, rationale, error))
        for (category_id, one), rows in units.items():
            failed = list(dict.fromkeys(error for _, side, _, error in rows if side is None))
            status = JudgeUnit.Status.ERROR if failed else JudgeUnit.Status.DONE
            unit, created = JudgeUnit.objects.get_or_create(
                judge=judge, pair=pair, category_id=category_id, criterion=one, a_first=plan.a_first, defaults={"status": status}
            )
            fresh = {(c.id, side, rationale) for c, side, rationale, _ in rows if side is not None}
            stored = {(v.criterion_id, v.winner, v.reason) for v in unit.verdicts.all()}
            if not created and stored == fresh and (unit.status, unit.error) == (status, "\n".join(failed)):
                report.judge_units["unchanged"] += 1
                continue
            report.judge_units["new" if created else "updated"] += 1
            unit.verdicts.all().delete()
            JudgeVerdict.objects.bulk_create([JudgeVerdict(unit=unit, criterion_id=cid, winner=side, reason=r) for cid, side, r in fresh])
            JudgeUnit.objects.filter(pk=unit.pk).update(status=status, error="\n".join(failed), updated_at=now)


def _record(report: ImportReport, rows_file: RowsFile, bad: list[tuple[int, str]]) -> None:
    bad.sort(key=lambda item: item[0])
    report.problems += [Problem(f"{rows_file.name}:{line}", message) for line, message in bad]
    report.bad_rows += len({line for line, _ in bad})


def _canonical(context: _Context, target: _Target) -> tuple[Article, Article]:
    """(article_a, article_b) of the target's pair: as stored, else reference first, else lower key."""
    pair = context.pairs.get(target.pair_key)
    if pair is not None:
        return pair.article_a, pair.article_b
    reference = context.campaign.reference_system
    ranked = sorted(
        (target.left, target.right),
        key=lambda a: (not (a.system.key == reference.key if reference else a.system.is_reference), a.system.key),
    )
    return ranked[0], ranked[1]


def _check_overall(context: _Context, rows_file: RowsFile, plans: dict, report: ImportReport) -> dict:
    wanted: dict[tuple, tuple[_Target, str]] = {}
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        errors: list[str] = []
        target = context.resolve(values, errors)
        if not context.campaign.ask_overall:
            errors.append("this campaign does not ask for an overall preference")
        value = values["overall"]
        positional = {values["left_system"]: "1", values["right_system"]: "2", TIE: TIE, BOTH_BAD: BOTH_BAD}.get(value)
        if positional is None or value == "":
            errors.append(f"overall '{value}' must be left_system, right_system, {TIE} or {BOTH_BAD}")
        if target is not None:
            _order_matches(context, plans, target, errors, "an overall answer")
            if target.key in seen:
                errors.append(f"repeats line {seen[target.key]} (same pair and rater)")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[target.key] = line
        wanted[target.key] = (target, positional)
    _record(report, rows_file, bad)
    return wanted


def _check_spans(context: _Context, rows_file: RowsFile, plans: dict, report: ImportReport) -> list:
    wanted: list[tuple[_Target, Span]] = []
    seen: dict[tuple, int] = {}
    bad = list(rows_file.problems)
    for line, values in rows_file.rows:
        errors: list[str] = []
        target = context.resolve(values, errors)
        article = None
        if target is not None:
            article = {target.left.system.key: target.left, target.right.system.key: target.right}.get(values["system"])
            if article is None:
                errors.append(f"system '{values['system']}' is neither left_system nor right_system")
            _order_matches(context, plans, target, errors, "a span")
        start = end = None
        if DIGITS.fullmatch(values["start"]) and DIGITS.fullmatch(values["end"]):
            start, end = int(values["start"]), int(values["end"])
        else:
            errors.append("start and end must be whole numbers")
        if article is not None and start is not None:
            text = context.text(article)
            if not (start < end <= len(text)):
                errors.append(f"offsets {start}..{end} are outside the article's text ({len(text)} characters)")
            elif text[start:end] != values["quote"]:
                errors.append(f"quote does not match the article's text at {start}..{end}")
        polarity = POLARITIES.get(values["polarity"])
        if polarity is None:
            errors.append(f"polarity must be up or down, not '{values['polarity']}'")
        if len(values["comment"]) > MAX_COMMENT:
            errors.append(f"comment is longer than {MAX_COMMENT} characters")
        created_at = time_field(values, "created_at", errors, required=True)
        identity = None
        if not errors:
            identity = (target.key, article.id, start, end, polarity, values["comment"], created_at)
            if identity in seen:
                errors.append(f"repeats line {seen[identity]}")
        if errors:
            bad += [(line, message) for message in errors]
            continue
        seen[identity] = line
        span = Span(article=article, start=start, end=end, quote=values["quote"], polarity=polarity, comment=values["comment"], created_at=created_at)
        wanted.append((target, span))
    _record(report, rows_file, bad)
    return wanted


def labels_import(
    *,
    campaign: Campaign,
    labels: RowsFile,
    overall: RowsFile | None = None,
    spans: RowsFile | None = None,
    skip_bad: bool = False,
    now: datetime | None = None,
) -> ImportReport:
    """Checks every row of the three files, then writes them in one transaction.

    Missing pairs and rater accounts are created (raters as inactive users who
    cannot log in); each (pair, rater) becomes a submitted assignment. With a bad
    row nothing is written unless `skip_bad`, which writes the good rows.
    """
    now = now or timezone.now()
    report = ImportReport()
    context = _Context(campaign, [f for f in (labels, overall, spans) if f is not None])
    plans, judge_plans = _check_labels(context, labels, report)
    if judge_plans:
        report.judge_units = {"new": 0, "updated": 0, "unchanged": 0}
    wanted_overall = _check_overall(context, overall, plans, report) if overall is not None else {}
    wanted_spans = _check_spans(context, spans, plans, report) if spans is not None else []
    if overall is not None:
        report.overall = {"new": 0, "updated": 0, "unchanged": 0}
    if spans is not None:
        report.spans = {"new": 0, "unchanged": 0}
    if report.problems and not skip_bad:
        return report
    with transaction.atomic():
        assignments = _write_assignments(context, plans, report, now)
        _write_labels(plans, assignments, report, now)
        _write_overall(context, wanted_overall, assignments, report, now)
        _write_spans(context, wanted_spans, assignments, report)
        _write_judges(context, judge_plans, report, now)
    report.imported = True
    return report


def _write_assignments(context: _Context, plans: dict, report: ImportReport, now: datetime) -> dict:
    campaign = context.campaign
    for rater in sorted({plan.target.rater for plan in plans.values()} - set(context.users)):
        user = User.objects.create_user(username=rater, password=None, is_active=False)
        context.users[rater] = user
        report.raters_created += 1
    next_order = (campaign.pairs.aggregate(top=Max("order"))["top"] or 0) + 1
    assignments: dict[tuple, Assignment] = {}
    changes: list[LabelChange] = []
    for key, plan in plans.items():
        target, user = plan.target, context.users[plan.target.rater]
        pair = context.pairs.get(target.pair_key)
        if pair is None:
            article_a, article_b = _canonical(context, target)
            pair = Pair.objects.create(campaign=campaign, topic=target.topic, article_a=article_a, article_b=article_b, order=next_order)
            context.pairs[target.pair_key] = pair
            next_order += 1
            report.pairs_created += 1
        a_on_left = target.left.id == pair.article_a_id
        last_saved = max(saved_at for *_, saved_at in plan.labels)
        assignment = context.assignments.get((pair.id, user.id))
        if assignment is None:
            assignment = Assignment.objects.create(
                pair=pair,
                annotator=user,
                a_on_left=a_on_left,
                status=Assignment.Status.SUBMITTED,
                claimed_at=plan.started_at or min(saved_at for *_, saved_at in plan.labels),
                first_opened_at=plan.started_at,
                last_activity_at=last_saved,
                submitted_at=last_saved,
            )
            changes.append(LabelChange(assignment=assignment, field="status", old_value="", new_value=assignment.status, changed_by=user, changed_at=now))
            report.assignments["new"] += 1
        else:
            updated = []
            if assignment.a_on_left != a_on_left:
                assignment.a_on_left = a_on_left
                # The overall answer is stored by position: keep it naming the same article.
                assignment.overall = {"1": "2", "2": "1"}.get(assignment.overall, assignment.overall)
                updated += ["a_on_left", "overall"]
            if assignment.status != Assignment.Status.SUBMITTED:
                changes.append(LabelChange(assignment=assignment, field="status", old_value=assignment.status, new_value=Assignment.Status.SUBMITTED, changed_by=user, changed_at=now))
                assignment.status = Assignment.Status.SUBMITTED
                updated.append("status")
            if plan.started_at is not None and assignment.first_opened_at != plan.started_at:
                assignment.first_opened_at = plan.started_at
                updated.append("first_opened_at")
            if assignment.submitted_at is None or assignment.submitted_at < last_saved:
                assignment.submitted_at = last_saved
                updated.append("submitted_at")
            if assignment.last_activity_at < last_saved:
                assignment.last_activity_at = last_saved
                updated.append("last_activity_at")
            if updated:
                assignment.save(update_fields=updated)
                report.assignments["updated"] += 1
            else:
                report.assignments["unchanged"] += 1
        assignments[key] = assignment
        context.assignments[pair.id, user.id] = assignment
    LabelChange.objects.bulk_create(changes)
    return assignments


def _write_labels(plans: dict, assignments: dict, report: ImportReport, now: datetime) -> None:
    stored = {
        (label.assignment_id, label.criterion_id): label
        for label in Label.objects.filter(assignment__in=list(assignments.values()))
    }
    new, changed, changes = [], [], []
    for key, plan in plans.items():
        assignment = assignments[key]
        for criterion, winner, rationale, saved_at in plan.labels:
            label = stored.get((assignment.id, criterion.id))
            if label is None:
                label = Label(assignment=assignment, criterion=criterion, winner="", rationale="", created_at=saved_at, saved_at=saved_at)
                new.append(label)
            elif (label.winner, label.rationale, label.saved_at) == (winner, rationale, saved_at):
                report.labels["unchanged"] += 1
                continue
            else:
                changed.append(label)
            for name, value in (("winner", winner), ("rationale", rationale)):
                old = getattr(label, name)
                if old != value:
                    changes.append(LabelChange(assignment=assignment, criterion=criterion, field=name, old_value=old, new_value=value, changed_by=assignment.annotator, changed_at=now))
                    setattr(label, name, value)
            label.saved_at = saved_at
    Label.objects.bulk_create(new)
    Label.objects.bulk_update(changed, ["winner", "rationale", "saved_at"])
    LabelChange.objects.bulk_create(changes)
    report.labels["new"] += len(new)
    report.labels["updated"] += len(changed)


def _assignment_for(context: _Context, target: _Target, assignments: dict) -> Assignment:
    return assignments.get(target.key) or context.stored(target)


def _write_overall(context: _Context, wanted: dict, assignments: dict, report: ImportReport, now: datetime) -> None:
    for target, value in wanted.values():
        assignment = _assignment_for(context, target, assignments)
        if assignment.overall == value:
            report.overall["unchanged"] += 1
            continue
        report.overall["new" if assignment.overall == "" else "updated"] += 1
        LabelChange.objects.create(
            assignment=assignment, field="overall", old_value=assignment.overall, new_value=value, changed_by=assignment.annotator, changed_at=now
        )
        Assignment.objects.filter(pk=assignment.pk).update(overall=value)
        assignment.overall = value


def _write_spans(context: _Context, wanted: list, assignments: dict, report: ImportReport) -> None:
    if not wanted:
        return
    owners = {target.key: _assignment_for(context, target, assignments) for target, _ in wanted}
    stored = {
        (s.assignment_id, s.article_id, s.start, s.end, s.polarity, s.comment, s.created_at)
        for s in Span.objects.filter(assignment__in=list(owners.values()))
    }
    new = []
    for target, span in wanted:
        span.assignment = owners[target.key]
        if (span.assignment.id, span.article_id, span.start, span.end, span.polarity, span.comment, span.created_at) in stored:
            report.spans["unchanged"] += 1
        else:
            new.append(span)
    Span.objects.bulk_create(new)
    report.spans["new"] += len(new)
