"""Known-answer (gold) pairs: making them from a campaign's reference articles (`gold_pairs_make`,
the `make_gold` command), and when a claim silently gives one (`gold_draw`, `gold_rate_problem`).

A gold pair is an ordinary `Pair` of the campaign, article A a reference article and B a copy of it
degraded by `annotate.gold`, with a `GoldPair` row recording the degradation and, per targeted
criterion, the side that must win ("a"). The copy is an `Article` of a hidden system (`System.is_gold`,
one per degradation, key ``gold-<degradation>``), rendered by the same code as every other article,
so the page and the API show it exactly as they show any article. Nothing an annotator receives
names the pair's kind: the claim hands it out like any other pair (`claims`), with a display order
drawn the same way.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotate import gold
from annotate.cleaning import count_words
from annotate.models import Article, Assignment, Campaign, GoldPair, GoldPauseLift, Pair, System
from annotate.rendering import render, toc_from_html
from annotate.services.items import pair_save

GOLD_SYSTEM_PREFIX = "gold-"
GOLD_SOURCE = "make_gold: a known-answer copy of the reference article"
PER_DEGRADATION_MAX = 10_000


@dataclass
class GoldSummary:
    """What `gold_pairs_make` did: pairs made per degradation, and why others were not."""

    made: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.made.values())


def gold_rate_problem(value: float | None) -> str | None:
    """Why a campaign's gold rate cannot be used (None: it can): a share between 0 and 1."""
    if value is None:
        return None
    if not isinstance(value, (int, float)) or value != value or not 0.0 <= value <= 1.0:
        return f"The gold rate is a share of claims between 0 and 1 (0: no gold pairs); not {value!r}."
    return None


def gold_pause_problems(below: float | None, after: int) -> list[str]:
    """What is wrong with the optional pause rule (below: an accuracy in (0, 1]; after: pairs, at least 1)."""
    errors = []
    if below is not None and (below != below or not 0.0 < below <= 1.0):
        errors.append(f"The gold pause threshold is an accuracy above 0 and at most 1; not {below!r}.")
    if after < 1:
        errors.append(f"The gold pause rule needs at least 1 gold pair before it applies; not {after}.")
    return errors


def gold_draw(*, campaign_id: int, user_id: int, index: int) -> float:
    """The number in [0, 1) that decides whether the user's `index`-th claim in the campaign gives a
    gold pair (below the campaign's gold rate: yes). Keyed with the server's secret, so nothing an
    annotator can know lets them predict it; fixed for a given claim, so `claims.pairs_left` can
    count the gold pairs still to come exactly as the claims will give them."""
    key = settings.SECRET_KEY.encode("utf-8")
    digest = hmac.new(key, f"gold-mix:{campaign_id}:{user_id}:{index}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _gold_system(degradation: str) -> System:
    system, _ = System.objects.get_or_create(
        key=GOLD_SYSTEM_PREFIX + degradation.replace("_", "-"),
        defaults={
            "name": f"Known-answer copies ({degradation.replace('_', ' ')})",
            "description": "Reference articles degraded on purpose by make_gold; never offered as a system.",
            "is_gold": True,
        },
    )
    if not system.is_gold:
        raise ValidationError([f"The system '{system.key}' exists and is not a known-answer system: rename it first."])
    return system


def _copy(original: Article, system: System, markdown: str) -> Article:
    """The degraded copy as an Article, rendered as imports render every article."""
    html = render(markdown).html
    return Article(
        topic_id=original.topic_id,
        system=system,
        raw_markdown=markdown,
        display_markdown=markdown,
        html=html,
        toc=[list(entry) for entry in toc_from_html(html)],
        word_count=count_words(markdown),
        raw_word_count=count_words(markdown),
        content_hash=hashlib.sha256(markdown.encode("utf-8")).hexdigest(),
        source=GOLD_SOURCE,
    )


def gold_pairs_make(*, campaign: Campaign, per_degradation: int = 2, seed: int = 0) -> GoldSummary:
    """Adds up to `per_degradation` gold pairs per degradation to the campaign, each on a different
    reference article (chosen in an order drawn from `seed`), each paired with its original.

    A degradation that cannot apply to an article, or targets none of the campaign's criteria, is
    skipped with its reason. Running it again adds nothing where a gold pair of that degradation and
    topic exists; a copy already stored for another campaign is reused when it is the same text.
    Raises ValidationError for a campaign without a reference system or reference pairs, a
    labels-only campaign, or a bad count."""
    errors = []
    if per_degradation < 1 or per_degradation > PER_DEGRADATION_MAX:
        errors.append(f"--per-degradation is a number of pairs from 1 to {PER_DEGRADATION_MAX}; not {per_degradation}.")
    if campaign.labels_only:
        errors.append("A labels-only campaign has no article texts to degrade.")
    if campaign.reference_system_id is None:
        errors.append("The campaign has no reference system: gold pairs are made from reference articles.")
    if errors:
        raise ValidationError(errors)
    originals = list(
        Article.objects.filter(
            pk__in=Pair.objects.filter(campaign=campaign, gold__isnull=True, article_a__system_id=campaign.reference_system_id).values(
                "article_a_id"
            )
        ).order_by("topic_id")
    )
    if not originals:
        raise ValidationError(["The campaign has no pair with its reference article on side A: there is nothing to degrade."])
    criteria = list(campaign.criterion_set.criteria.values_list("key", flat=True))
    summary = GoldSummary()
    with transaction.atomic():
        next_order = (Pair.objects.filter(campaign=campaign).aggregate(m=Max("order"))["m"] or 0) + 1
        count = Pair.objects.filter(campaign=campaign).count()
        done = set(GoldPair.objects.filter(pair__campaign=campaign).values_list("degradation", "pair__topic_id"))
        for degradation in gold.DEGRADATIONS:
            if not gold.targets_for(degradation, criteria):
                summary.skipped.append(f"{degradation}: the rubric has none of the criteria it targets")
                continue
            system = _gold_system(degradation)
            order = list(originals)
            random.Random(f"{seed}:{degradation}:articles").shuffle(order)
            made = sum(1 for d, _ in done if d == degradation)
            for original in order:
                if made >= per_degradation:
                    break
                if (degradation, original.topic_id) in done:
                    continue
                try:
                    copy = gold.degrade(original.display_markdown, degradation, seed=seed, criteria=criteria)
                except gold.CannotDegrade as exc:
                    summary.skipped.append(f"{degradation} of '{original.topic}': {exc.reason}")
                    continue
                article = _stored_copy(original, system, copy.markdown, summary)
                if article is None:
                    continue
                # An order among the campaign's own, drawn as theirs are: nothing in it sets gold pairs apart.
                pair = pair_save(
                    Pair(
                        campaign=campaign,
                        topic_id=original.topic_id,
                        article_a=original,
                        article_b=article,
                        order=random.SystemRandom().randrange(count + next_order),
                    )
                )
                GoldPair.objects.create(
                    pair=pair, degradation=degradation, expected={c: "a" for c in copy.targets}, change=copy.change[:300], seed=seed
                )
                done.add((degradation, original.topic_id))
                made += 1
                summary.made[degradation] = summary.made.get(degradation, 0) + 1
    return summary


def _stored_copy(original: Article, system: System, markdown: str, summary: GoldSummary) -> Article | None:
    existing = Article.objects.filter(topic_id=original.topic_id, system=system).first()
    if existing is None:
        article = _copy(original, system, markdown)
        article.save()
        return article
    if existing.display_markdown == markdown:
        return existing
    summary.skipped.append(f"{system.key} of '{original.topic}': a different copy is stored already (made with another seed); it is kept")
    return None


def gold_pause_lift(*, campaign: Campaign, username: str, by: User) -> GoldPauseLift:
    """Staff lift an annotator's gold pause: from now on the pause rule counts only the gold pairs
    they submit after this moment. ValidationError for a username with no work in the campaign."""
    annotator = User.objects.filter(username=username).first()
    if annotator is None or not Assignment.objects.filter(pair__campaign=campaign, annotator=annotator).exists():
        raise ValidationError([f"'{username}' has no work in the campaign '{campaign.name}': there is no pause to lift."])
    return GoldPauseLift.objects.create(campaign=campaign, annotator=annotator, lifted_by=by, lifted_at=timezone.now())


def gold_accept_separable_set(*, campaign: Campaign, accept: bool) -> None:
    """Whether kinds of gold pair that their text sets apart may drive the campaign's pause rule."""
    Campaign.objects.filter(pk=campaign.pk).update(gold_accept_separable=accept)
    campaign.gold_accept_separable = accept


# --- settled known-answer pairs: gold that looks like every other pair -----------------------

SETTLED = "settled"


def settled_answers(*, source: Campaign) -> dict[int, dict[str, str]]:
    """{pair id: {criterion key: side}} of the source campaign's settled items: those whose submitted
    answers (two annotators or more, swapped repeats aside) all name one side, and those an
    adjudicator decided for a side. A tie is never a settled answer; an adjudicated side wins over
    the annotators'. Gold pairs are left out."""
    from collections import defaultdict

    from annotate.models import Adjudication, Label

    answers: dict[tuple[int, str], list[str]] = defaultdict(list)
    rows = Label.objects.filter(
        assignment__pair__campaign=source,
        assignment__pair__gold__isnull=True,
        assignment__status=Assignment.Status.SUBMITTED,
        assignment__repeat_of__isnull=True,
    ).exclude(winner="")
    for pair_id, key, winner in rows.values_list("assignment__pair_id", "criterion__key", "winner"):
        answers[(pair_id, key)].append(winner)
    settled: dict[int, dict[str, str]] = defaultdict(dict)
    for (pair_id, key), winners in answers.items():
        if len(winners) >= 2 and len(set(winners)) == 1 and winners[0] in ("a", "b"):
            settled[pair_id][key] = winners[0]
    decided = Adjudication.objects.filter(campaign=source, winner__in=("a", "b")).values_list("pair_id", "criterion__key", "winner")
    for pair_id, key, winner in decided:
        settled[pair_id][key] = winner
    return dict(settled)


def gold_settled_make(*, campaign: Campaign, source: Campaign, limit: int = 20) -> GoldSummary:
    """Adds up to `limit` known-answer pairs to `campaign` from `source`'s settled items
    (`settled_answers`): the same two articles, a pair like any other, whose expected answers are the
    settled ones on the criteria both rubrics share. Their text cannot set them apart: they are two
    articles written apart, as every other pair is (`annotate.gold_separability` measures it). A pair
    whose two articles are already paired in `campaign` is skipped, so no one meets one pair twice."""
    errors = []
    if source.pk == campaign.pk:
        errors.append("Settled pairs come from another campaign: in this one their annotators have met them already.")
    if campaign.labels_only:
        errors.append("A labels-only campaign is never offered to annotators: gold pairs do not apply to it.")
    if not 1 <= limit <= PER_DEGRADATION_MAX:
        errors.append(f"--settled-limit is a number of pairs from 1 to {PER_DEGRADATION_MAX}; not {limit}.")
    if errors:
        raise ValidationError(errors)
    criteria = set(campaign.criterion_set.criteria.values_list("key", flat=True))
    there = set(Pair.objects.filter(campaign=campaign).values_list("article_a_id", "article_b_id"))
    summary = GoldSummary()
    settled = settled_answers(source=source)
    pairs = {p.pk: p for p in Pair.objects.filter(pk__in=settled).order_by("pk")}
    order = sorted(settled, key=lambda pair_id: hmac.new(settings.SECRET_KEY.encode(), f"settled:{campaign.pk}:{pair_id}".encode(),
                                                          hashlib.sha256).hexdigest())  # fmt: skip
    with transaction.atomic():
        count = Pair.objects.filter(campaign=campaign).count()
        for pair_id in order:
            if summary.made.get(SETTLED, 0) >= limit:
                break
            pair = pairs[pair_id]
            expected = {key: side for key, side in settled[pair_id].items() if key in criteria}
            if not expected:
                summary.skipped.append(f"settled pair {pair_id}: none of its settled criteria is in this campaign's rubric")
                continue
            if (pair.article_a_id, pair.article_b_id) in there or (pair.article_b_id, pair.article_a_id) in there:
                summary.skipped.append(f"settled pair {pair_id}: its two articles are already a pair of this campaign")
                continue
            copy = pair_save(Pair(
                campaign=campaign, topic_id=pair.topic_id, article_a_id=pair.article_a_id, article_b_id=pair.article_b_id,
                order=random.SystemRandom().randrange(count + 1),
            ))  # fmt: skip
            GoldPair.objects.create(pair=copy, degradation=SETTLED, expected=expected, change=f"settled in '{source.name}'"[:300])
            there.add((pair.article_a_id, pair.article_b_id))
            summary.made[SETTLED] = summary.made.get(SETTLED, 0) + 1
    return summary
