"""What the rows of an import are about: the campaign's catalogue loaded once, and each row's rater and pair.

Shared by the human-label import (`label_import`) and the judges' rows (`judge_rows`).
A labels-only campaign has no texts: the topics, systems and articles its rows
name but the catalogue lacks are planned here (`annotate.services.placeholders`)
and saved by the import once every row has been checked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Max

from annotate.answers import CANNOT_JUDGE
from annotate.models import ARTICLE_TEXTS, Article, ArticleStep, Assignment, Campaign, Criterion, Pair, System, Topic
from annotate.rendering import plain_text
from annotate.services.answers import imported_answer_problems
from annotate.services.items import pair_save, pairs_save
from annotate.services.placeholders import (
    NewCriteria,
    Placeholders,
    criteria_grow,
    labels_only_benchmark,
    topic_title_problem,
)
from common.names import name_problem
from interchange.formats import HUMAN, JUDGE, RowsFile
from judges.imports import SCOPE_CAMPAIGN
from protocols.pairwise import TIE

USERNAME = re.compile(r"[\w.@+-]{1,150}")
# Values per `IN (...)` list.
CHUNK = 5000


@dataclass(frozen=True)
class Target:
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


class Context:
    """Everything the rows refer to, loaded once before validating."""

    def __init__(self, campaign: Campaign, files: list[RowsFile], judge_scope: str = SCOPE_CAMPAIGN) -> None:
        self.campaign = campaign
        self.judge_scope = judge_scope  # whose judges the rows' judge names are (`judges.imports.imported_judges_resolve`)
        titles = {title for f in files for title in f.distinct.get("topic", ())}
        raters = {rater for f in files for rater in f.distinct.get("rater", ())}
        self.criteria = {c.key: c for c in campaign.criterion_set.criteria.all()}
        # Criteria the rows name and the rubric lacks: only for a rubric made to grow from the labels.
        self.new_criteria = NewCriteria(campaign.criterion_set) if criteria_grow(campaign.criterion_set) else None
        # Planned criteria whose response a row has fixed (pairwise, or the one-article type it names).
        self.decided: set[str] = set()
        self.systems = {s.key: s for s in System.objects.all()}
        self.pairs = {
            frozenset((p.article_a_id, p.article_b_id)): p for p in campaign.pairs.select_related("article_a__system", "article_b__system")
        }
        campaign_topics = {p.topic_id for p in self.pairs.values()}
        self.topics: dict[str, list[Topic]] = {}
        # Planned topics, systems and articles: only for a labels-only campaign, whose rows may name what is missing.
        self.placeholders: Placeholders | None = None
        if campaign.labels_only:
            # Its topics live in its own benchmark, apart from every topic with texts: the one
            # its pairs are in, else the one named after it (a renamed campaign keeps its topics).
            benchmark = campaign.pairs.values_list("topic__benchmark", flat=True).first()
            benchmark = benchmark or labels_only_benchmark(campaign.name)
            topics = list(Topic.objects.filter(benchmark=benchmark).order_by("id"))
            self.placeholders = Placeholders(benchmark=benchmark, taken_slugs=[t.slug for t in topics])
            articles = Article.objects.filter(topic__benchmark=benchmark)
        else:
            ordered = sorted(titles)
            topics = [
                topic
                for start in range(0, len(ordered), CHUNK)
                for topic in Topic.objects.filter(title__in=ordered[start : start + CHUNK]).order_by("id")
            ]
            articles = None
        for topic in topics:
            self.topics.setdefault(topic.title, []).append(topic)
        for title, topics in self.topics.items():
            inside = [t for t in topics if t.id in campaign_topics]
            self.topics[title] = inside or topics
        if articles is None:
            ids = [t.id for ts in self.topics.values() for t in ts]
            articles = [
                article
                for start in range(0, len(ids), CHUNK)
                for article in Article.objects.filter(topic_id__in=ids[start : start + CHUNK])
                .select_related("system")
                .defer(*ARTICLE_TEXTS)
            ]
        else:
            articles = articles.select_related("system").defer(*ARTICLE_TEXTS)
        self.articles = {(a.topic_id, a.system.key): a for a in articles}
        # Raters as written, and as Django stores usernames (NFKC): a name that normalises to
        # another one must be reported, not collide at insertion.
        self.raters_in_files = raters
        wanted = sorted(raters | {unicodedata.normalize("NFKC", r) for r in raters})
        user_ids = []
        self.users = {}
        # In slices: SQLite takes at most 32,766 values in one statement, and a crowd has more raters than that.
        for start in range(0, len(wanted), CHUNK):
            for user in User.objects.filter(username__in=wanted[start : start + CHUNK]):
                self.users[user.username] = user
                user_ids.append(user.pk)
        self.assignments = {
            (a.pair_id, a.annotator_id): a
            for start in range(0, len(user_ids), CHUNK)
            # Originals: an import writes each annotator's one answer, never onto a swapped repeat.
            for a in Assignment.objects.filter(
                pair__campaign=campaign, repeat_of__isnull=True, annotator_id__in=user_ids[start : start + CHUNK]
            )
        }
        self._texts: dict[int, str] = {}
        self._steps: dict[int, list[ArticleStep]] = {}
        # The order of the next pair created (`pair_ensure`), read from the campaign when first needed.
        self.next_order: int | None = None
        # Checks of names and values met many times: one answer each.
        self._rater_problems: dict[tuple[str, str], list[str]] = {}

    def criterion(self, key: str, errors: list[str]) -> Criterion | None:
        """The criterion a row names: the rubric's, or (for a rubric grown from the labels) a planned one."""
        criterion = self.criteria.get(key)
        if criterion is not None:
            return criterion
        if self.new_criteria is None:
            errors.append(f"unknown criterion '{key}' (not in {self.campaign.criterion_set})")
            return None
        if problem := name_problem(key, what="criterion"):
            errors.append(problem)
            return None
        criterion = self.criteria[key] = self.new_criteria.criterion(key)
        return criterion

    def _rater_problem(self, kind: str, rater: str) -> list[str]:
        found = self._rater_problems.get((kind, rater))
        if found is not None:
            return found
        found = []
        if kind == JUDGE:
            if problem := name_problem(rater, what="judge name"):
                found.append(problem)
        elif kind != HUMAN:
            found.append(f"rater_kind must be '{HUMAN}', not '{kind}' (or '{JUDGE}' for a judge's verdicts)")
        elif not USERNAME.fullmatch(rater):
            found.append(f"rater '{rater}' is not a valid username (letters, digits and @.+-_, at most 150)")
        elif (normal := unicodedata.normalize("NFKC", rater)) != rater:
            if normal in self.users:
                whose = "an existing account's"
            elif normal in self.raters_in_files:
                whose = "another rater's of this import"
            else:
                whose = None
            found.append(
                f"rater '{rater}' is the username '{normal}' once normalised (Unicode NFKC, as accounts are stored), "
                + (
                    f"which is {whose}: the two would be one account; spell them alike or rename one"
                    if whose
                    else f"write it as '{normal}'"
                )
            )
        self._rater_problems[kind, rater] = found
        return found

    def text(self, article: Article) -> str:
        if article.id not in self._texts:
            self._texts[article.id] = plain_text(article.html)
        return self._texts[article.id]

    def steps(self, article: Article) -> list[ArticleStep]:
        """The article's steps in order (loaded once per article)."""
        if article.id not in self._steps:
            self._steps[article.id] = list(ArticleStep.objects.filter(article_id=article.id).order_by("order"))
        return self._steps[article.id]

    def step_text(self, step: ArticleStep) -> str:
        """A step's text as a page shows it: what a passage's offsets count."""
        return plain_text(step.html)

    def stored(self, target: Target) -> Assignment | None:
        pair, user = self.pairs.get(target.pair_key), self.users.get(target.rater)
        if pair is None or user is None:
            return None
        return self.assignments.get((pair.id, user.id))

    def _rater_and_topic(self, values: dict[str, str], errors: list[str], *, judges: bool) -> Topic | None:
        """The row's topic (None when unknown), checking its campaign and rater on the way."""
        campaign = self.campaign
        # A file from elsewhere may have no campaign column: the rows are then the campaign's.
        if values["campaign"] and values["campaign"] != campaign.name:
            errors.append(f"campaign is '{values['campaign']}', not '{campaign.name}'")
        kind = values.get("rater_kind") or HUMAN
        rater = values["rater"]
        if kind == JUDGE and not judges:
            errors.append("judge verdicts are not supported in overall and spans files (judges only give labels)")
        else:
            errors += self._rater_problem(kind, rater)
        candidates = self.topics.get(values["topic"], [])
        if not candidates and self.placeholders is not None:
            if problem := topic_title_problem(values["topic"]):
                errors.append(problem)
            else:
                candidates = self.topics[values["topic"]] = [self.placeholders.topic(values["topic"])]
        if not candidates:
            if self.placeholders is None:
                errors.append(f"unknown topic '{values['topic']}'")
        elif len(candidates) > 1:
            errors.append(f"topic '{values['topic']}' is ambiguous: {len(candidates)} benchmarks have a topic with that title")
        else:
            return candidates[0]
        return None

    def _system_check(self, key: str, errors: list[str]) -> None:
        """Adds why `key` names no system (a labels-only campaign plans a new one instead)."""
        if key in self.systems:
            return
        if self.placeholders is None:
            errors.append(f"unknown system '{key}'")
        elif problem := name_problem(key, what="system"):
            errors.append(problem)
        else:
            self.systems[key] = self.placeholders.system(key)

    def _article(self, topic: Topic, key: str) -> Article | None:
        if self.placeholders is not None and (topic.id, key) not in self.articles:
            self.articles[topic.id, key] = self.placeholders.article(topic, self.systems[key])
        return self.articles.get((topic.id, key))

    def resolve_article(self, values: dict[str, str], errors: list[str]) -> tuple[Topic, Article] | None:
        """The topic and article a one-article row is about (its `system`), checking its rater."""
        before = len(errors)
        topic = self._rater_and_topic(values, errors, judges=True)
        key = values.get("system", "")
        if not key:
            errors.append("system is empty (a one-article row names the system of its article)")
        else:
            self._system_check(key, errors)
        if len(errors) > before or topic is None:
            return None
        article = self._article(topic, key)
        if article is None:
            errors.append(f"no article by '{key}' on topic '{topic.title}'")
            return None
        return topic, article

    def resolve(self, values: dict[str, str], errors: list[str], *, judges: bool = False) -> Target | None:
        """The rater and pair a row is about, checking the columns every file shares.

        Judge rows are accepted only where `judges` (the labels file): judges give no
        overall answer and mark no spans.
        """
        campaign = self.campaign
        before = len(errors)
        rater = values["rater"]
        topic = self._rater_and_topic(values, errors, judges=judges)
        left_key, right_key = values["left_system"], values["right_system"]
        for key in dict.fromkeys((left_key, right_key)):
            self._system_check(key, errors)
        if left_key == right_key:
            errors.append(f"left_system and right_system are both '{left_key}'")
        if len(errors) > before or topic is None:
            return None
        left, right = self._article(topic, left_key), self._article(topic, right_key)
        for key, article in ((left_key, left), (right_key, right)):
            if article is None:
                errors.append(f"no article by '{key}' on topic '{topic.title}'")
        if left is None or right is None:
            return None
        target = Target(topic=topic, left=left, right=right, rater=rater)
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


def canonical(context: Context, target: Target) -> tuple[Article, Article]:
    """(article_a, article_b) of the target's pair: as stored, else reference first, else lower key."""
    pair = context.pairs.get(target.pair_key)
    if pair is not None:
        return pair.article_a, pair.article_b
    reference = context.campaign.reference_system
    ranked = sorted(
        (target.left, target.right),
        key=lambda a: (
            not (a.system.key == reference.key if reference else a.system.is_reference),
            a.system.key,
        ),
    )
    return ranked[0], ranked[1]


def pairs_ensure(context: Context, targets: Iterable[Target]) -> int:
    """Creates the targets' missing pairs at once, as `pair_ensure` would one by one; returns how many."""
    new: dict[frozenset[int], Pair] = {}
    for target in targets:
        if target.pair_key in context.pairs or target.pair_key in new:
            continue
        article_a, article_b = canonical(context, target)
        new[target.pair_key] = Pair(campaign=context.campaign, topic=target.topic, article_a=article_a, article_b=article_b)
    if not new:
        return 0
    if context.next_order is None:
        context.next_order = (context.campaign.pairs.aggregate(top=Max("order"))["top"] or 0) + 1
    for pair in new.values():
        pair.order = context.next_order
        context.next_order += 1
    pairs_save(list(new.values()), batch_size=2000)
    context.pairs.update(new)
    return len(new)


def pair_ensure(context: Context, target: Target) -> tuple[Pair, bool]:
    """The target's pair, created at the end of the campaign's order when missing; (pair, created)."""
    pair = context.pairs.get(target.pair_key)
    if pair is not None:
        return pair, False
    if context.next_order is None:
        context.next_order = (context.campaign.pairs.aggregate(top=Max("order"))["top"] or 0) + 1
    article_a, article_b = canonical(context, target)
    pair = pair_save(
        Pair(campaign=context.campaign, topic=target.topic, article_a=article_a, article_b=article_b, order=context.next_order)
    )
    context.pairs[target.pair_key] = pair
    context.next_order += 1
    return pair, True


def verdict_check(campaign: Campaign, values: dict[str, str], errors: list[str], *, check_winner: bool = True) -> None:
    """Problems of a row's winner (when it has one) and rationale, human or judge row alike:
    the winner is a system shown or a tie the campaign allows, and the rationale fits."""
    winner = values["winner_system"] if check_winner else ""
    if winner == CANNOT_JUDGE:
        if not campaign.allow_cannot_judge:
            errors.append(f"winner_system is {CANNOT_JUDGE}, which this campaign does not allow")
        winner = ""  # no winner: the outcome checks below do not apply
    elif winner and winner != TIE and winner not in (values["left_system"], values["right_system"]):
        errors.append(f"winner_system '{winner}' is neither left_system, right_system, tie nor {CANNOT_JUDGE}")
    # The campaign's rules (ties, what a rationale may hold) are the answer service's.
    errors += imported_answer_problems(campaign=campaign, outcome=winner, rationale=values["rationale"])
