"""Writes to the catalogue of topics, systems, articles and rubrics."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from django.db import transaction
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.utils.text import slugify

import protocols
from annotate.cleaning import clean_article, count_words, strip_citations
from annotate.models import Article, ArticleStep, Category, Criterion, CriterionSet, System, Topic
from annotate.rendering import render, toc_from_html
from annotate.sources import ArticleRecord, Batch, Problem, RubricRecord, SystemRecord, read_rubric
from common.names import name_problem


@dataclass
class ImportSummary:
    topics_created: int = 0
    systems_created: int = 0
    articles_created: int = 0
    articles_updated: int = 0
    articles_unchanged: int = 0
    criterion_set: str = ""
    criterion_set_created: bool = False
    markdown_bytes: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = [
            f"topics: {self.topics_created} new",
            f"systems: {self.systems_created} new",
            f"articles: {self.articles_created} new, {self.articles_updated} updated, {self.articles_unchanged} unchanged",
        ]
        if self.criterion_set:
            state = "new" if self.criterion_set_created else "unchanged"
            lines.append(f"criterion set: {self.criterion_set} ({state})")
        return lines

    def report_lines(self, elapsed: float) -> list[str]:
        """What import_wlc and import_articles print, and the upload page shows: counts, size and time, notes."""
        lines = [*self.lines(), f"markdown: {self.markdown_bytes / 1_048_576:.2f} MB in {elapsed:.2f} s"]
        return lines + [f"note: {note}" for note in self.notes]


def batch_found_line(batch: Batch) -> str:
    return f"benchmark {batch.benchmark}: {len(batch.articles)} articles found, {len(batch.systems)} systems"


def topic_slug(title: str) -> str:
    slug = slugify(title, allow_unicode=True)
    if not slug:
        slug = "topic-" + hashlib.sha256(title.encode("utf-8")).hexdigest()[:12]
    return slug[:300]


@dataclass(frozen=True)
class PreparedStep:
    display: str
    html: str


@dataclass
class PreparedArticle:
    record: ArticleRecord
    display_markdown: str
    html: str
    toc: list
    word_count: int
    raw_word_count: int
    content_hash: str
    # What rendering showed as text or dropped ("" when nothing): reported per file at import.
    render_report: str = ""
    # The agent's steps as shown, one per `record.steps`.
    steps: tuple[PreparedStep, ...] = ()


def content_hash(record: ArticleRecord) -> str:
    """What tells a changed article at re-import: its markdown, and its steps when it has any (an
    article without steps keeps the hash it always had)."""
    digest = hashlib.sha256(record.markdown.encode("utf-8"))
    if record.steps:
        steps = [[s.kind, s.content, s.query, s.url, s.title] for s in record.steps]
        digest.update(b"\0steps\0" + json.dumps(steps, ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()


def step_prepare(content: str) -> PreparedStep:
    """A step cleaned as the human-written article is (citations, URLs, footnotes and source lists
    out, and no agent's-note rule: a step's words about the task are the step) and rendered."""
    display = strip_citations(content, is_reference=True)
    return PreparedStep(display=display, html=render(display).html)


def article_prepare(record: ArticleRecord) -> PreparedArticle:
    """Cleans and renders one article; pure CPU work, done before any write."""
    display = clean_article(record.markdown, record.topic, is_reference=record.is_reference)
    rendered = render(display)
    html = rendered.html
    return PreparedArticle(
        record=record,
        display_markdown=display,
        html=html,
        toc=[list(entry) for entry in toc_from_html(html)],
        word_count=count_words(display),
        raw_word_count=count_words(record.markdown),
        content_hash=content_hash(record),
        render_report=rendered.describe(),
        steps=tuple(step_prepare(step.content) for step in record.steps),
    )


# A batch of this many characters of markdown or more is prepared on every core, in forked worker
# processes; below it, starting them costs more than they save (the sample, 1.97 MB, prepares in
# about 0.3 s on one core).
PARALLEL_MIN_CHARS = 512 * 1024
# The batch a forked worker reads: set before the fork, so the workers get it with their memory and
# only indexes go to them; they send back what they computed, never the markdown.
_FORKED_RECORDS: list[ArticleRecord] = []


def _prepared_bin(indexes: list[int]) -> list[PreparedArticle]:
    """In a forked worker: these articles of `_FORKED_RECORDS` prepared, without their records (the
    parent has them: only what was computed goes back through the pipe)."""
    return [replace(article_prepare(_FORKED_RECORDS[index]), record=None) for index in indexes]


def _fork_bin(indexes: list[int]) -> tuple[int, int]:
    """A forked worker preparing these articles: its pid, and the pipe its answer comes back on (a
    pickled (True, articles), or (False, what went wrong)). The worker leaves with os._exit: none of
    the parent's exit handlers (its database connections' among them) run in it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read)
            try:
                answer = (True, _prepared_bin(indexes))
            except BaseException as exc:  # reported to the parent, which raises it
                answer = (False, f"{type(exc).__name__}: {exc}")
            with os.fdopen(write, "wb") as out:
                pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0 if answer[0] else 1
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _bin_collected(pid: int, pipe: int) -> list[PreparedArticle]:
    """A forked worker's articles, once it has sent them and ended; RuntimeError when it failed."""
    with os.fdopen(pipe, "rb") as answers:
        try:
            ok, payload = pickle.load(answers)
        except (EOFError, pickle.UnpicklingError):
            ok, payload = False, "it ended without an answer"
    _, status = os.waitpid(pid, 0)
    if not ok or status != 0:
        raise RuntimeError(f"an import worker failed: {payload if not ok else f'exit status {status}'}")
    return payload


def _bins(records: list[ArticleRecord], n: int) -> list[list[int]]:
    """The records' indexes in ``n`` bins of about equal markdown (the work is about proportional to
    it): longest first, each into the lightest bin."""
    bins: list[list[int]] = [[] for _ in range(n)]
    loads = [0] * n
    for index in sorted(range(len(records)), key=lambda i: -len(records[i].markdown)):
        lightest = loads.index(min(loads))
        bins[lightest].append(index)
        loads[lightest] += len(records[index].markdown)
    return bins


def _threads() -> int:
    """This process's threads as the system counts them: Python's, and native ones such as a BLAS
    library's pool, which `threading` does not see (Linux; elsewhere, Python's alone)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def prepare_workers(records: list[ArticleRecord]) -> int:
    """How many processes prepare ``records`` (this one included): one per core for a big batch,
    when this process may fork. A process with other threads (a web worker's, or a BLAS pool's)
    prepares alone: a forked child could wait forever on a lock another thread held at the fork."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cores < 2 or _threads() > 1 or not hasattr(os, "fork"):
        return 1
    return 1 if sum(len(r.markdown) for r in records) < PARALLEL_MIN_CHARS else min(cores, 8)


def articles_prepare(
    records: list[ArticleRecord], *, progress: Callable[[int, int], None] | None = None, workers: int | None = None
) -> list[PreparedArticle]:
    """Cleans and renders many articles, in order. ``workers``: processes, this one included (None:
    `prepare_workers`); with more than one, this process prepares one share of the markdown while
    forked workers prepare the others. Each article comes out the same whichever process prepared
    it: the work is pure."""
    global _FORKED_RECORDS
    workers = prepare_workers(records) if workers is None else workers
    total = len(records)

    def tick(done: int) -> None:
        if progress:
            progress(done, total)

    if workers <= 1 or total < 2:
        prepared = []
        for record in records:
            prepared.append(article_prepare(record))
            tick(len(prepared))
        return prepared
    bins = _bins(records, min(workers, total))
    results: list[PreparedArticle | None] = [None] * total
    _FORKED_RECORDS = records
    # Objects frozen before the fork are never scanned by the workers' collector, which would
    # otherwise write to (so copy) every page of this process's memory they share.
    gc.freeze()
    children: list[tuple[int, int, list[int]]] = []
    try:
        for indexes in bins[1:]:
            children.append((*_fork_bin(indexes), indexes))
        gc.unfreeze()
        done = 0
        for index in bins[0]:
            results[index] = article_prepare(records[index])
            done += 1
            tick(done)
        while children:
            pid, pipe, indexes = children.pop(0)
            for index, item in zip(indexes, _bin_collected(pid, pipe)):
                results[index] = replace(item, record=records[index])
                done += 1
                tick(done)
    finally:
        gc.unfreeze()
        for pid, pipe, _ in children:  # left by an error: stopped and reaped, never left behind
            os.close(pipe)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        _FORKED_RECORDS = []
    return results


def _systems_ensure(systems: dict[str, SystemRecord], summary: ImportSummary) -> dict[str, System]:
    existing = {s.key: s for s in System.objects.filter(key__in=list(systems))}
    for key, record in systems.items():
        if key in existing:
            continue
        existing[key] = System.objects.create(key=key, name=record.name, description=record.description, is_reference=record.is_reference)
        summary.systems_created += 1
    return existing


def topic_key(title: str) -> str:
    """How a topic is recognised: its title, case and runs of white space aside."""
    return " ".join(title.split()).casefold()


def _topics_ensure(benchmark: str, articles: list[ArticleRecord], summary: ImportSummary) -> dict[str, Topic]:
    """The benchmark's topics by `topic_key` of their titles, creating those missing.

    Topics are told apart by title, not by slug: titles that slugify alike
    ("C" and "C++") are different topics, and the later one gets its slug
    suffixed with a digest of its title.
    """
    wanted: dict[str, tuple[str, str]] = {}  # key -> (title as first seen, category)
    for record in articles:
        key = topic_key(record.topic)
        title, category = wanted.get(key, (" ".join(record.topic.split()), ""))
        wanted[key] = (title, category or record.category)
    # A benchmark has thousands of topics at most: matching them here keeps the rule in one place.
    stored = list(Topic.objects.filter(benchmark=benchmark))
    existing = {topic_key(t.title): t for t in stored}
    taken = {t.slug for t in stored}
    new = []
    for key, (title, category) in wanted.items():
        if key in existing:
            continue
        slug = topic_slug(title)
        if slug in taken:
            slug = f"{slug[:290]}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:8]}"
        taken.add(slug)
        new.append(Topic(benchmark=benchmark, slug=slug, title=title, category=category))
    Topic.objects.bulk_create(new)
    summary.topics_created += len(new)
    # Fill a category learned later without overwriting one already set.
    for key, (_, category) in wanted.items():
        topic = existing.get(key)
        if topic is not None and category and not topic.category:
            topic.category = category
            topic.save(update_fields=["category"])
    keys = set(wanted)
    return {key: t for t in Topic.objects.filter(benchmark=benchmark) if (key := topic_key(t.title)) in keys}


def articles_import(*, batch: Batch, replace: bool = False, prepared: list[PreparedArticle] | None = None) -> ImportSummary:
    """Imports everything usable in `batch` in one transaction.

    An article already stored for the same (topic, system) is left alone when
    its content is the same; when it differs it is kept and reported unless
    `replace` is set, so a re-import never silently changes what was labelled.
    """
    summary = ImportSummary(problems=list(batch.problems), notes=list(batch.notes))
    if prepared is not None and len(prepared) != len(batch.articles):
        raise ValueError("prepared must hold one entry per article of the batch, in order")
    seen: dict[tuple[str, str], str] = {}
    keep: list[int] = []
    # The readers check system keys already; this keeps any other caller to the same rule.
    refused = {
        key: problem for key in {*batch.systems, *(r.system for r in batch.articles)} if (problem := name_problem(key, what="system"))
    }
    for index, record in enumerate(batch.articles):
        if record.system in refused:
            summary.problems.append(Problem(record.source, f"{refused[record.system]}: skipped"))
            continue
        key = (topic_key(record.topic), record.system)
        if key in seen:
            summary.problems.append(
                Problem(
                    record.source, f"a second article for topic '{record.topic}' and system '{record.system}' (first: {seen[key]}): skipped"
                )
            )
            continue
        seen[key] = record.source
        keep.append(index)
    if prepared is None:
        prepared = articles_prepare([batch.articles[i] for i in keep])
    else:
        prepared = [prepared[i] for i in keep]
    summary.markdown_bytes = sum(len(p.record.markdown.encode("utf-8")) for p in prepared)
    summary.notes.extend(f"{p.record.source}: {p.render_report}" for p in prepared if p.render_report)

    with transaction.atomic():
        if batch.rubric is not None:
            criterion_set, created = criterion_set_import(rubric=batch.rubric)
            summary.criterion_set = str(criterion_set)
            summary.criterion_set_created = created
        if not prepared:
            return summary
        systems = _systems_ensure({k: v for k, v in batch.systems.items() if k not in refused}, summary)
        topics = _topics_ensure(batch.benchmark, [p.record for p in prepared], summary)
        stored = {
            (a.topic_id, a.system_id): a
            for a in Article.objects.filter(topic__in=list(topics.values()), system__in=list(systems.values())).only(
                "id", "topic_id", "system_id", "content_hash"
            )
        }
        new: list[Article] = []
        new_steps: list[PreparedArticle] = []
        for item in prepared:
            topic = topics[topic_key(item.record.topic)]
            system = systems[item.record.system]
            current = stored.get((topic.id, system.id))
            fields = {
                "raw_markdown": item.record.markdown,
                "display_markdown": item.display_markdown,
                "html": item.html,
                "toc": item.toc,
                "word_count": item.word_count,
                "raw_word_count": item.raw_word_count,
                "content_hash": item.content_hash,
                "source": item.record.source,
            }
            if current is None:
                new.append(Article(topic=topic, system=system, **fields))
                new_steps.append(item)
            elif current.content_hash == item.content_hash:
                summary.articles_unchanged += 1
            elif replace:
                Article.objects.filter(pk=current.pk).update(**fields)
                ArticleStep.objects.filter(article_id=current.pk).delete()
                ArticleStep.objects.bulk_create(_step_rows(current.pk, item))
                summary.articles_updated += 1
            else:
                summary.problems.append(
                    Problem(
                        item.record.source,
                        "differs from the stored article for this topic and system: stored version kept (use --replace to overwrite)",
                    )
                )
        Article.objects.bulk_create(new, batch_size=200)
        steps = [row for article, item in zip(new, new_steps) for row in _step_rows(article.pk, item)]
        if steps:
            ArticleStep.objects.bulk_create(steps, batch_size=500)
        summary.articles_created += len(new)
    return summary


def _step_rows(article_id: int, item: PreparedArticle) -> list[ArticleStep]:
    return [
        ArticleStep(
            article_id=article_id,
            order=order,
            kind=record.kind,
            raw_content=record.content,
            content=shown.display,
            html=shown.html,
            query=record.query,
            url=record.url,
            title=record.title,
        )
        for order, (record, shown) in enumerate(zip(item.record.steps, item.steps))
    ]


def rubric_read(path, *, key: str | None = None) -> tuple[RubricRecord | None, list[Problem]]:
    """A criteria file read (`sources.read_rubric`) and checked against the pages too: a criterion whose
    protocol names a partial (`PARTIAL`) that no template folder holds is refused, since no page could
    draw its answers."""
    rubric, problems = read_rubric(path, key=key)
    if rubric is None:
        return rubric, problems
    found: dict[str, str | None] = {}  # by protocol: each template is looked up once
    for category in rubric.categories:
        for item in category.criteria:
            name = (item.response or {}).get("type") or protocols.DEFAULT
            if name not in found:
                found[name] = _partial_problem(name)
            if found[name]:
                problems.append(Problem(rubric.source or str(path), f"criterion '{item.key}': {found[name]}"))
    return rubric, problems


def _partial_problem(name: str) -> str | None:
    partial = getattr(protocols.REGISTRY.get(name), "PARTIAL", None)
    try:
        get_template(partial)
    except (TemplateDoesNotExist, TypeError, ValueError):
        return f"response type '{name}' has no partial to draw its answers on the page (no template '{partial}')"
    return None


def criterion_set_import(*, rubric: RubricRecord) -> tuple[CriterionSet, bool]:
    """Stores a rubric; identical content reuses the latest version, changed content adds one."""
    digest = rubric.content_hash()
    with transaction.atomic():
        latest = CriterionSet.objects.select_for_update().filter(key=rubric.key).order_by("-version").first()
        if latest is not None and latest.content_hash == digest:
            return latest, False
        criterion_set = CriterionSet.objects.create(
            key=rubric.key,
            version=(latest.version + 1) if latest else 1,
            name=rubric.name,
            description=rubric.description,
            content_hash=digest,
            source=rubric.source,
        )
        order = 0
        criteria: list[Criterion] = []
        for c_order, record in enumerate(rubric.categories):
            category = Category.objects.create(
                criterion_set=criterion_set, key=record.key, name=record.name, description=record.description, order=c_order
            )
            for item in record.criteria:
                criteria.append(
                    Criterion(
                        criterion_set=criterion_set,
                        category=category,
                        key=item.key,
                        text=item.text,
                        subcategory_key=item.subcategory_key,
                        subcategory_name=item.subcategory_name,
                        watch_class=item.watch_class,
                        response=item.response,
                        title=item.title,
                        order=order,
                    )
                )
                order += 1
        Criterion.objects.bulk_create(criteria)
    return criterion_set, True
