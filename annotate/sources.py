"""Reading benchmarks from disk into plain records. No Django imports here.

Every reader collects `Problem`s instead of stopping at the first bad file, so
an import can report all of them and still load the rest.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import protocols
from common.names import REFERENCE_SYSTEM, name_problem
from common.storable import first_unstorable, json_problem, located_problem, printable, text_problem

# The lengths of the columns these land in (annotate.models); PostgreSQL refuses longer text.
MAX_TITLE, MAX_CATEGORY, MAX_SYSTEM_NAME = 300, 200, 200  # a system key's rule is common.names.NAME_RULE


@dataclass(frozen=True)
class Problem:
    where: str
    message: str

    def __str__(self) -> str:
        # A file name or a quoted value may hold a NUL or a surrogate, which would break the terminal or the write.
        return printable(f"{self.where}: {self.message}")


@dataclass(frozen=True)
class StepRecord:
    """One intermediate step of the agent that wrote an article: a plan, a search, a page read, a
    note, a summary ... (``kind``: a short word), its Markdown ``content``, and what a search asked
    or a page read was (``query``, ``url``, ``title``; empty when the step has none)."""

    kind: str
    content: str
    query: str = ""
    url: str = ""
    title: str = ""


@dataclass
class ArticleRecord:
    topic: str
    system: str
    markdown: str
    category: str = ""
    source: str = ""
    # The reference keeps what only agents' articles lose (their notes on sourcing).
    is_reference: bool = False
    # The agent's intermediate steps, in order (import_articles' `steps`; the WLC layout has none).
    steps: tuple[StepRecord, ...] = ()


@dataclass
class SystemRecord:
    key: str
    name: str
    description: str = ""
    is_reference: bool = False


@dataclass
class CriterionRecord:
    key: str
    text: str
    subcategory_key: str = ""
    subcategory_name: str = ""
    watch_class: str = ""
    response: dict = field(default_factory=dict)  # `protocols.criterion_response`; {}: pairwise
    title: str = ""  # a short name for scanning (issue 37), at most TITLE_MAX_LENGTH; "" when the file gives none

    def hashed(self) -> list:
        """What the rubric's content hash covers of this criterion (no title: the hash of a file without titles is unchanged)."""
        fields = [self.key, self.text, self.subcategory_key, self.subcategory_name, self.watch_class]
        return fields + ([self.response] if self.response else []) + ([["title", self.title]] if self.title else [])


TITLE_MAX_LENGTH = 80


@dataclass
class CategoryRecord:
    key: str
    name: str
    description: str
    criteria: list[CriterionRecord]


@dataclass
class RubricRecord:
    key: str
    name: str
    description: str
    categories: list[CategoryRecord]
    source: str = ""

    def content_hash(self) -> str:
        """Hash of everything an annotator reads, so a changed text means a new version."""
        canonical = json.dumps(
            [
                [
                    c.key,
                    c.name,
                    c.description,
                    [k.hashed() for k in c.criteria],
                ]
                for c in self.categories
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def criterion_count(self) -> int:
        return sum(len(c.criteria) for c in self.categories)


@dataclass
class Batch:
    """What a reader found: records to import and problems to report."""

    benchmark: str = "default"
    systems: dict[str, SystemRecord] = field(default_factory=dict)
    articles: list[ArticleRecord] = field(default_factory=list)
    rubric: RubricRecord | None = None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class SourceError(Exception):
    """The input as a whole cannot be used (missing folder, unreadable layout)."""


# --- reading files ---------------------------------------------------------


def read_text(path: Path, *, max_bytes: int, label: str | None = None, storable: bool = True) -> tuple[str | None, Problem | None]:
    """The file's text, or the reason it cannot be used. `storable=False` leaves NULs for the caller to report by row."""
    where = label or str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        return None, Problem(where, f"cannot be read ({exc.strerror})")
    if size > max_bytes:
        return None, Problem(
            where, f"is {size / 1_048_576:.1f} MB, over the {max_bytes / 1_048_576:.1f} MB limit per article (MAX_ARTICLE_BYTES)"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, Problem(where, f"cannot be read ({exc.strerror})")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, Problem(where, f"is not valid UTF-8 (bad byte at offset {exc.start})")
    if not text.strip():
        return None, Problem(where, "is empty")
    found = located_problem(text) if storable else None
    if found:
        line, column, problem = found
        return None, Problem(f"{where}:{line}", f"{problem} (column {column})")
    return text, None


# --- matching file names to titles -----------------------------------------

_SEPARATORS = re.compile(r"[\s_/\\:]+")
_NON_WORD = re.compile(r"[\W_]+")


def title_from_stem(stem: str) -> str:
    return _SEPARATORS.sub(" ", unicodedata.normalize("NFC", stem).replace("_", " ")).strip()


def title_keys(title: str) -> tuple[str, str]:
    """Two keys for matching, strict then loose.

    File names replace `/` and spaces with `_` and may differ in Unicode
    normalization or case; the loose key also drops punctuation and accents.
    """
    nfc = unicodedata.normalize("NFKC", title).casefold()
    strict = _SEPARATORS.sub(" ", nfc).strip()
    decomposed = unicodedata.normalize("NFKD", nfc)
    ascii_like = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    loose = _NON_WORD.sub("", ascii_like)
    return strict, loose


class TitleIndex:
    """Finds the topic a file name belongs to."""

    def __init__(self) -> None:
        self._strict: dict[str, str] = {}
        self._loose: dict[str, str | None] = {}

    def add(self, key_source: str, topic: str) -> None:
        strict, loose = title_keys(key_source)
        self._strict.setdefault(strict, topic)
        # A loose key shared by two topics is ambiguous: refuse to guess.
        if loose in self._loose and self._loose[loose] != topic:
            self._loose[loose] = None
        else:
            self._loose[loose] = topic

    def find(self, name: str) -> str | None:
        strict, loose = title_keys(name)
        if strict in self._strict:
            return self._strict[strict]
        return self._loose.get(loose)


_FIRST_HEADING = re.compile(r"\A\s*#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def heading_title(markdown: str) -> str | None:
    match = _FIRST_HEADING.match(markdown)
    return match.group(1).strip() if match else None


# --- criteria files --------------------------------------------------------


def parse_rubric(data: object, *, key: str, source: str) -> tuple[RubricRecord | None, list[Problem]]:
    """Reads the Wiki Live Challenge criteria layout (categories, optional subcategories)."""
    problems: list[Problem] = []
    if not isinstance(data, dict) or not isinstance(data.get("categories"), list) or not data["categories"]:
        return None, [Problem(source, "is not a criteria file: expected an object with a non-empty 'categories' list")]
    categories: list[CategoryRecord] = []
    seen_criteria: dict[str, str] = {}
    seen_categories: set[str] = set()
    for c_index, raw_category in enumerate(data["categories"]):
        where = f"{source}: categories[{c_index}]"
        if not isinstance(raw_category, dict) or not str(raw_category.get("id") or "").strip():
            problems.append(Problem(where, "has no 'id'"))
            continue
        category_key = str(raw_category["id"]).strip()
        if category_key in seen_categories:
            problems.append(Problem(where, f"duplicate category id '{category_key}'"))
            continue
        seen_categories.add(category_key)
        groups: list[tuple[str, str, list]] = []
        if isinstance(raw_category.get("criteria"), list):
            groups.append(("", "", raw_category["criteria"]))
        for sub in raw_category.get("subcategories") or []:
            if not isinstance(sub, dict) or not isinstance(sub.get("criteria"), list):
                problems.append(Problem(where, "has a subcategory without a 'criteria' list"))
                continue
            groups.append((str(sub.get("id") or ""), str(sub.get("name") or sub.get("id") or ""), sub["criteria"]))
        criteria: list[CriterionRecord] = []
        for sub_key, sub_name, items in groups:
            for item in items:
                if not isinstance(item, dict):
                    problems.append(Problem(where, "has a criterion that is not an object"))
                    continue
                criterion_key = str(item.get("id") or "").strip()
                text = str(item.get("text") or "").strip()
                if not criterion_key:
                    problems.append(Problem(where, "has a criterion without an 'id'"))
                    continue
                if criterion_key in seen_criteria:
                    problems.append(
                        Problem(source, f"duplicate criterion id '{criterion_key}' (in {seen_criteria[criterion_key]} and {category_key})")
                    )
                    continue
                if not text:
                    problems.append(Problem(source, f"criterion '{criterion_key}' has no text"))
                    continue
                title = " ".join(str(item.get("title") or "").split())
                if len(title) > TITLE_MAX_LENGTH:
                    problems.append(
                        Problem(source, f"criterion '{criterion_key}': a title of {len(title)} characters (at most {TITLE_MAX_LENGTH})")
                    )
                    continue
                seen_criteria[criterion_key] = category_key
                response, wrong = protocols.criterion_response(item.get("response"))
                if wrong:
                    problems.append(Problem(source, f"criterion '{criterion_key}': {'; '.join(wrong)}"))
                    continue
                criteria.append(
                    CriterionRecord(
                        key=criterion_key,
                        text=text,
                        subcategory_key=sub_key,
                        subcategory_name=sub_name,
                        watch_class=str(item.get("watch_class") or ""),
                        response=response,
                        title=title,
                    )
                )
        if not criteria:
            problems.append(Problem(where, f"category '{category_key}' has no criteria"))
            continue
        categories.append(
            CategoryRecord(
                key=category_key,
                name=str(raw_category.get("name") or category_key),
                description=str(raw_category.get("description") or ""),
                criteria=criteria,
            )
        )
    if problem := protocols.group_size_problem([c.response for category in categories for c in category.criteria]):
        problems.append(Problem(source, problem))
    if problems:
        return None, problems
    rubric = RubricRecord(
        key=key,
        name=str(data.get("name") or key),
        description=str(data.get("description") or ""),
        categories=categories,
        source=source,
    )
    return rubric, []


def rubric_key_from_path(path: Path) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", path.stem.lower()).strip("-") or "criteria"


def read_rubric(path: Path, *, key: str | None = None) -> tuple[RubricRecord | None, list[Problem]]:
    text, problem = read_text(path, max_bytes=10 * 1_048_576)
    if problem:
        return None, [problem]
    data, problem = _json_loads(text, str(path))
    if problem:
        return None, [problem]
    return parse_rubric(data, key=key or rubric_key_from_path(path), source=str(path))


def _json_loads(text: str, where: str) -> tuple[object, Problem | None]:
    """Parsed JSON whose every string a database can store, or the problem."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, Problem(f"{where}:{exc.lineno}", f"is not valid JSON ({exc.msg})")
    except RecursionError:
        return None, Problem(where, "is not usable JSON (nested too deeply)")
    except ValueError as exc:  # a number of thousands of digits
        return None, Problem(where, f"is not usable JSON ({exc})")
    problem = json_problem(data, max_depth=None)
    if problem:
        return None, Problem(where, f"is not usable: {problem}")
    return data, None


# --- the Wiki Live Challenge layout ----------------------------------------


def _benchmark_dir(path: Path, benchmark: str | None) -> tuple[Path, Path | None]:
    """Returns (data/<benchmark> folder, repository root or None)."""
    if not path.exists():
        raise SourceError(f"{path}: no such folder")
    if not path.is_dir():
        raise SourceError(f"{path}: is not a folder")
    if (path / "wiki_data").is_dir() or (path / "test_data").is_dir():
        if benchmark and benchmark != path.name:
            raise SourceError(f"{path} is the benchmark folder '{path.name}', not '{benchmark}'")
        root = path.parent.parent
        return path, root if (root / "evaluation").is_dir() else None
    data = path / "data"
    if not data.is_dir():
        raise SourceError(
            f"{path}: neither a Wiki Live Challenge repository (no data/ folder) nor a data/<benchmark> folder (no wiki_data/ or test_data/)"
        )
    found = sorted(p.name for p in data.iterdir() if p.is_dir() and ((p / "wiki_data").is_dir() or (p / "test_data").is_dir()))
    if not found:
        raise SourceError(f"{data}: holds no benchmark folder with wiki_data/ or test_data/")
    if benchmark:
        if benchmark not in found:
            raise SourceError(f"{data}: no benchmark '{benchmark}' (found: {', '.join(found)})")
        return data / benchmark, path
    if len(found) > 1:
        raise SourceError(f"{data}: several benchmarks ({', '.join(found)}); choose one with --benchmark")
    return data / found[0], path


def _read_categories(csv_path: Path, batch: Batch) -> dict[str, str]:
    categories: dict[str, str] = {}
    if not csv_path.is_file():
        batch.notes.append(f"{csv_path.name} not found: topics get no category")
        return categories
    text, problem = read_text(csv_path, max_bytes=50 * 1_048_576, storable=False)
    if problem:
        batch.problems.append(problem)
        return categories
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or "title" not in reader.fieldnames:
        batch.problems.append(Problem(str(csv_path), "has no 'title' column"))
        return categories
    for row in reader:
        title = (row.get("title") or "").strip()
        category = (row.get("category") or row.get("ga_topic_keyword") or "").strip()
        problem = text_problem(title) or text_problem(category)
        if problem is None and len(category) > MAX_CATEGORY:
            problem = f"has a category longer than {MAX_CATEGORY} characters"
        if problem:
            batch.problems.append(Problem(f"{csv_path}:{reader.line_num}", f"{problem}: row skipped"))
            continue
        if title:
            categories[title_keys(title)[0]] = category
    return categories


def _read_agencies(path: Path, batch: Batch) -> dict[str, SystemRecord]:
    systems: dict[str, SystemRecord] = {}
    if not path.is_file():
        batch.notes.append("test_data/agencies.json not found: systems are named after their folders")
        return systems
    text, problem = read_text(path, max_bytes=10 * 1_048_576)
    if problem:
        batch.problems.append(problem)
        return systems
    data, problem = _json_loads(text, str(path))
    if problem:
        batch.problems.append(problem)
        return systems
    agencies = data.get("agencies") if isinstance(data, dict) else None
    if not isinstance(agencies, dict):
        batch.problems.append(Problem(str(path), "has no 'agencies' object"))
        return systems
    for key, info in agencies.items():
        info = info if isinstance(info, dict) else {}
        systems[key] = SystemRecord(key=key, name=str(info.get("name") or key), description=str(info.get("description") or ""))
    return systems


def _bad_name(label: str, batch: Batch) -> bool:
    """Reports a file name that is not UTF-8 (Python spells its bytes as surrogates, which no database stores)."""
    if first_unstorable(label) is None:
        return False
    batch.problems.append(Problem(label, "has a name that is not valid UTF-8 text: skipped"))
    return True


def read_wlc(path: Path, *, benchmark: str | None = None, max_bytes: int) -> Batch:
    bench_dir, root = _benchmark_dir(path, benchmark)
    if first_unstorable(bench_dir.name) is not None:
        raise SourceError(f"{printable(str(bench_dir))}: the folder name is not valid UTF-8 text; rename it")
    batch = Batch(benchmark=bench_dir.name)
    wiki_dir = bench_dir / "wiki_data"
    article_dir = wiki_dir / "cleaned_data" / "article"
    test_dir = bench_dir / "test_data"
    if not article_dir.is_dir():
        raise SourceError(f"{article_dir}: missing; the reference articles define the topics")

    categories = _read_categories(wiki_dir / "ga_100.csv", batch)
    batch.systems[REFERENCE_SYSTEM] = SystemRecord(REFERENCE_SYSTEM, "Wikipedia", "Human-written Wikipedia article (reference)", True)

    index = TitleIndex()
    for md in sorted(article_dir.glob("*.md")):
        label = str(md.relative_to(bench_dir))
        if _bad_name(label, batch):
            continue
        text, problem = read_text(md, max_bytes=max_bytes, label=label)
        if problem:
            batch.problems.append(problem)
            continue
        stem_title = title_from_stem(md.stem)
        heading = heading_title(text)
        # The article's own heading keeps characters that file names lose (such as '/').
        title = heading if heading and title_keys(heading.replace("/", "_"))[1] == title_keys(md.stem)[1] else stem_title
        index.add(md.stem, title)
        index.add(title, title)
        category = categories.get(title_keys(md.stem)[0]) or categories.get(title_keys(title)[0], "")
        batch.articles.append(ArticleRecord(title, REFERENCE_SYSTEM, text, category, label, is_reference=True))
    if not batch.articles:
        raise SourceError(f"{article_dir}: holds no readable .md article")

    if not test_dir.is_dir():
        batch.notes.append("test_data/ not found: only reference articles imported")
        return batch
    agencies = _read_agencies(test_dir / "agencies.json", batch)
    refused: set[str] = set()  # folders whose name is no valid system key
    for system_dir in sorted(p for p in test_dir.iterdir() if p.is_dir()):
        if _bad_name(str(system_dir.relative_to(bench_dir)), batch):
            continue
        md_dir = system_dir / "md_data"
        if not md_dir.is_dir():
            batch.notes.append(f"test_data/{system_dir.name}/ has no md_data/ folder: skipped")
            continue
        key = system_dir.name
        if problem := name_problem(key, what="system"):
            # The folder name is the system key: rename the folder (agencies.json can still give any display name).
            batch.problems.append(Problem(f"test_data/{key}", f"{problem}: skipped; rename the folder"))
            refused.add(key)
            continue
        if key not in agencies:
            batch.notes.append(f"system '{key}' is not listed in agencies.json: named after its folder")
        batch.systems[key] = agencies.get(key) or SystemRecord(key, key)
        for md in sorted(md_dir.glob("*.md")):
            label = str(md.relative_to(bench_dir))
            if _bad_name(label, batch):
                continue
            topic = index.find(md.stem)
            if topic is None:
                batch.problems.append(Problem(label, "matches no reference article title: not placed"))
                continue
            text, problem = read_text(md, max_bytes=max_bytes, label=label)
            if problem:
                batch.problems.append(problem)
                continue
            batch.articles.append(ArticleRecord(topic, key, text, "", label))
    for key in sorted(set(agencies) - set(batch.systems) - refused):
        batch.notes.append(f"system '{key}' is listed in agencies.json but has no md_data/ folder")

    if root is not None:
        criteria_path = root / "evaluation" / "data" / "wiki_writing_criteria.json"
        if criteria_path.is_file():
            batch.rubric, problems = read_rubric(criteria_path)
            batch.problems.extend(problems)
        else:
            batch.notes.append("evaluation/data/wiki_writing_criteria.json not found: no criterion set imported")
    return batch


# --- generic JSON Lines ----------------------------------------------------

REQUIRED_FIELDS = ("topic", "system", "markdown")
# A step's kind is a short word (plan, search, read, think, summary, answer, or another); its
# query, URL and title land in columns of these lengths (annotate.models.ArticleStep).
STEP_KIND_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
MAX_STEP_FIELD = {"query": 1000, "url": 2000, "title": 500}
MAX_STEPS = 500


def parse_steps(value: object) -> tuple[tuple[StepRecord, ...], str | None]:
    """An article's ``steps`` (a JSON list of objects) as records, or the first problem with them."""
    if value is None:
        return (), None
    if not isinstance(value, list):
        return (), "steps must be a list of objects"
    if len(value) > MAX_STEPS:
        return (), f"steps: {len(value)} steps, over the limit of {MAX_STEPS}"
    out = []
    for index, step in enumerate(value, start=1):
        where = f"steps[{index}]"
        if not isinstance(step, dict):
            return (), f"{where} is not an object"
        unknown = sorted(set(step) - {"type", "content", "query", "url", "title"})
        if unknown:
            return (), f"{where} has unknown field(s) {', '.join(unknown)} (a step has type, content, query, url, title)"
        kind = step.get("type")
        if not isinstance(kind, str) or not STEP_KIND_RE.fullmatch(kind.strip().lower()):
            return (), f"{where}: type must be one short word (plan, search, read, think, summary, answer, ...), not {kind!r}"
        content = step.get("content")
        if not isinstance(content, str):
            return (), f"{where}: content must be a string of Markdown"
        extras = {}
        for name, limit in MAX_STEP_FIELD.items():
            text = step.get(name)
            if text is None:
                text = ""
            if not isinstance(text, str):
                return (), f"{where}: {name} must be a string"
            text = " ".join(text.split())
            if len(text) > limit:
                return (), f"{where}: {name} is longer than {limit} characters"
            extras[name] = text
        out.append(StepRecord(kind=kind.strip().lower(), content=content, **extras))
    return tuple(out), None


def read_jsonl(path: Path, *, max_bytes: int) -> Batch:
    if not path.exists():
        raise SourceError(f"{path}: no such file")
    if not path.is_file():
        raise SourceError(f"{path}: is not a file")
    if first_unstorable(str(path)) is not None:
        # The name becomes the benchmark and each article's source.
        raise SourceError(f"{printable(str(path))}: the file name is not valid UTF-8 text; rename it")
    batch = Batch(benchmark=path.stem)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror})") from exc
    if not raw.strip():
        raise SourceError(f"{path}: is empty")
    for number, line_bytes in enumerate(raw.split(b"\n"), start=1):
        where = f"{path}:{number}"
        if not line_bytes.strip():
            continue
        try:
            line = line_bytes.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            batch.problems.append(Problem(where, f"is not valid UTF-8 (bad byte at column {exc.start + 1})"))
            continue
        nul = line.find("\x00")
        if nul >= 0:
            batch.problems.append(Problem(where, f"contains a NUL byte (column {nul + 1}), which cannot be stored"))
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            batch.problems.append(Problem(where, f"is not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        except RecursionError:
            batch.problems.append(Problem(where, "is not usable JSON (nested too deeply)"))
            continue
        except ValueError as exc:  # a number of thousands of digits
            batch.problems.append(Problem(where, f"is not usable JSON ({exc})"))
            continue
        if not isinstance(obj, dict):
            batch.problems.append(Problem(where, "is not a JSON object"))
            continue
        problem = json_problem(obj, max_depth=None)
        if problem:
            batch.problems.append(Problem(where, problem))
            continue
        missing = [name for name in REQUIRED_FIELDS if not isinstance(obj.get(name), str) or not obj[name].strip()]
        if missing:
            batch.problems.append(Problem(where, f"lacks the field(s) {', '.join(missing)} (each a non-empty string)"))
            continue
        if len(line_bytes) > max_bytes:
            batch.problems.append(
                Problem(
                    where,
                    f"article is {len(line_bytes) / 1_048_576:.1f} MB, over the {max_bytes / 1_048_576:.1f} MB limit (MAX_ARTICLE_BYTES)",
                )
            )
            continue
        system = obj["system"].strip()
        if problem := name_problem(system, what="system"):
            batch.problems.append(Problem(where, problem))
            continue
        too_long = [
            f"{name} (at most {limit} characters)"
            for name, value, limit in (
                ("topic", " ".join(obj["topic"].split()), MAX_TITLE),
                ("system_name", str(obj.get("system_name") or ""), MAX_SYSTEM_NAME),
                ("category", str(obj.get("category") or "").strip(), MAX_CATEGORY),
            )
            if len(value) > limit
        ]
        if too_long:
            batch.problems.append(Problem(where, f"field(s) too long: {', '.join(too_long)}"))
            continue
        steps, problem = parse_steps(obj.get("steps"))
        if problem:
            batch.problems.append(Problem(where, problem))
            continue
        is_reference = bool(obj.get("reference")) or system == REFERENCE_SYSTEM
        known = batch.systems.get(system)
        if known is None:
            batch.systems[system] = SystemRecord(
                key=system,
                name=str(obj.get("system_name") or ("Wikipedia" if system == REFERENCE_SYSTEM else system)),
                description=str(obj.get("system_description") or ""),
                is_reference=is_reference,
            )
        elif known.is_reference != is_reference:
            batch.problems.append(Problem(where, f"system '{system}' is marked reference on one line and not on another"))
            continue
        batch.articles.append(
            ArticleRecord(
                topic=" ".join(obj["topic"].split()),
                system=system,
                markdown=obj["markdown"],
                category=str(obj.get("category") or "").strip(),
                source=where,
                is_reference=is_reference,
                steps=steps,
            )
        )
    if not batch.articles and not batch.problems:
        raise SourceError(f"{path}: holds no article")
    return batch
