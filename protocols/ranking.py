"""The ranking protocol: k articles of one topic (k from 3 to 6, set per criterion), put in order.

- An item is k articles, shown in an order drawn per viewer (`protocols.order`).
- A criterion says how many articles it ranks and whether two may share a place, in the criteria
  file as ``"response": {"type": "ranking", "articles": 4, "ties": false}`` (`read_response`).
- An answer is the articles best first. As the rater gives it and sees it, by position (1 for the
  article shown first): ``"2>1>3"``, a tie written ``"2>1=3"``. Stored by slot, so that it never
  depends on the order shown: ``"b>a>c"`` under the order "bac" (`stored_answer`, `shown_answer`).
  A labels file gives it by system key, ``"sys-b > sys-a = sys-c"``: the same two separators
  (`outcome_problems` checks its shape; the importer names the systems).
- A judge is shown the articles numbered in the order drawn for its call and answers, per criterion,
  the article numbers best first, in groups of those it ties (`build_request`, `parse_verdicts`).
- The metrics get, per answer, the groups of slots best first (`metric_outcome`), which the
  calibration's ranking adapter turns into orderings of systems: Plackett-Luce, Kendall's W and a
  judge's agreement with the humans' mean ranks (`calibration.metrics.orderings`). A ranking hands
  the metrics its pairs of systems too, one pair per two places, clustered by item there.

Pure: no Django.
"""

from __future__ import annotations

import json
import re

from protocols import order as orders
from protocols.base import CriterionSpec, InvalidResponse, JudgeRequest, criterion_keys
from protocols.one_article import as_given, criteria_request, no_overall, one_line, request_text, snippet, verdicts_reader

NAME = "ranking"
PARTIAL = "annotate/answers/ranking.html"
# Articles per item: set per criterion (`article_count`: its response's `articles`), within these bounds.
ARTICLES = range(3, orders.MAX_ARTICLES + 1)
JUDGED = True
AGREEMENT_STATISTICS = ("kendalls_w", "plackett_luce", "kendall_tau_mean_rank", "pairs_ordered_alike")
OVERALL_CHOICES = ()
BETTER, TIED = ">", "="

SYSTEM_PROMPT = (
    "You put several articles on one topic in order, criterion by criterion, best first. Judge each "
    "criterion on its own terms and only on what it asks about; length or polish is not a merit unless "
    "the criterion makes it one. The order the articles are numbered in means nothing. Answer with JSON only."
)
_NUMBER = re.compile(r"[1-9]")


def article_count(response: dict | None) -> int:
    """How many articles a criterion ranks (its response's `articles`); 0 when it says none."""
    count = (response or {}).get("articles")
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def allows_ties(response: dict | None) -> bool:
    return bool((response or {}).get("ties"))


def read_response(response: dict) -> tuple[dict, list[str]]:
    """A criterion's `response` object as stored, and what is wrong with it."""
    problems = [f"a ranking response has no parameter '{name}'" for name in sorted(set(response) - {"type", "articles", "ties"})]
    count = response.get("articles")
    if not isinstance(count, int) or isinstance(count, bool) or count not in ARTICLES:
        problems.append(f"articles must be a whole number from {ARTICLES[0]} to {ARTICLES[-1]}, not {count!r}")
    ties = response.get("ties", False)
    if not isinstance(ties, bool):
        problems.append(f"ties must be true or false, not {ties!r}")
    return {"type": NAME, "articles": count, "ties": ties}, problems


def groups_of(text: str) -> tuple[tuple[str, ...], ...]:
    """The groups of a written ranking, best first: "2>1=3" is ((2,), (1, 3)); spaces are ignored."""
    return tuple(tuple(member.strip() for member in group.split(TIED)) for group in text.split(BETTER))


def written(groups) -> str:
    """A ranking's groups written back: ((2,), (1, 3)) is "2>1=3"."""
    return BETTER.join(TIED.join(group) for group in groups)


def _shape_problems(groups, *, expected: int, ties: bool, what: str) -> list[str]:
    members = [member for group in groups for member in group]
    if any(member == "" for member in members):
        return [f"An empty place: write the {what}s best first, separated by '{BETTER}'."]
    if len(set(members)) != len(members):
        return [f"Each {what} takes one place: one is given twice."]
    if len(members) != expected:
        return [f"Rank all {expected} {what}s, each once ({len(members)} given)."]
    if not ties and any(len(group) > 1 for group in groups):
        return ["This criterion does not allow ties: give each article a place of its own."]
    return []


def answer_problems(shown: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with a ranking as the rater gave it, by position ("" clears it), as sentences."""
    count = article_count(response)
    if not count:
        return ["This criterion does not say how many articles it ranks."]
    if shown == "":
        return []
    groups = groups_of(shown)
    members = [member for group in groups for member in group]
    if any(member and not (_NUMBER.fullmatch(member) and int(member) <= count) for member in members):
        return [f"Rank the articles by their numbers, 1 to {count}."]
    return _shape_problems(groups, expected=count, ties=allows_ties(response), what="article")


def outcome_problems(outcome: str, *, allow_tie: bool = False, response: dict | None = None) -> list[str]:
    """What is wrong with a ranking as a labels file gives it (system keys best first), as phrases."""
    count = article_count(response)
    if not count:
        return ["the criterion does not say how many articles it ranks"]
    problems = _shape_problems(groups_of(outcome), expected=count, ties=allows_ties(response), what="system")
    return [problem[0].lower() + problem[1:].rstrip(".") for problem in problems]


def stored_answer(shown: str, *, order: str) -> str:
    """A ranking by position turned into slots under the order the rater was shown ("" stays "")."""
    if shown == "":
        return ""
    return written(tuple(orders.slot_at(order, int(member)) for member in group) for group in groups_of(shown))


def shown_answer(stored: str, *, order: str) -> str:
    """A stored ranking by slot as the viewer sees it, by position under `order` ("" stays "")."""
    if stored == "":
        return ""
    return written(tuple(str(orders.position_of(order, slot)) for slot in group) for group in groups_of(stored))


stored_overall = shown_overall = as_given
overall_problems = no_overall(NAME)


def named_answer(stored: str, systems: dict[str, str]) -> str:
    """A stored ranking as a labels file gives it, each slot named by its system (`systems`, slot -> key):
    "b>a=c" is "atlas_agent > wikipedia = scribe"."""
    return f" {BETTER} ".join(f" {TIED} ".join(systems[slot] for slot in group) for group in groups_of(stored))


def metric_outcome(stored: str, **_context) -> tuple[tuple[str, ...], ...]:
    """The ranking's groups of slots, best first: the calibration's adapter names their systems."""
    return groups_of(stored)


def metric_table(response: dict | None) -> None:
    """No table of the one-article metrics: a ranking's answers go to the orderings' statistics."""
    return None


def _check(criteria: list[CriterionSpec], count: int) -> None:
    for spec in criteria:
        if article_count(spec.response) != count:
            raise ValueError(f"criterion {spec.key} ranks {article_count(spec.response)} articles, not the {count} given")


def _answer_schema(count: int) -> dict:
    place = {"type": "array", "items": {"type": "integer", "enum": list(range(1, count + 1))}, "minItems": 1}
    return {"type": "array", "items": place, "minItems": 1, "maxItems": count}


def build_request(
    *,
    topic: str,
    articles: list[str],
    category: str,
    category_description: str,
    criteria: list[CriterionSpec],
    structured: bool,
    allow_tie: bool = False,
) -> JudgeRequest:
    """A request asking, per criterion, the order of `articles` (their texts in the order drawn for
    this call, numbered from 1) best first. Ties are offered only where a criterion allows them."""
    count = len(articles)
    if count not in ARTICLES:
        raise ValueError(f"a ranking takes {ARTICLES[0]} to {ARTICLES[-1]} articles, not {count}")
    criterion_keys(criteria)
    _check(criteria, count)

    def rule(spec: CriterionSpec) -> str:
        return "ties allowed" if allows_ties(spec.response) else "no ties"

    user = request_text(
        topic=topic,
        articles=[(f"Article {number}", text) for number, text in enumerate(articles, start=1)],
        category=category,
        category_description=category_description,
        heading="Criteria, one per line as key: what to look for [whether two articles may share a place]:",
        lines=[f"- {spec.key}: {one_line(spec.text)} [{rule(spec)}]" for spec in criteria],
        task=f"For each criterion above, put all {count} articles in order, best first, as a list of places; "
        "each place is a list of article numbers, one number unless the criterion allows ties and the "
        "articles are equally good. Give a short reason, one or two sentences, pointing to what decided it.",
        example="[[2], [1], [3]]",
    )
    return criteria_request(
        protocol=NAME,
        system_prompt=SYSTEM_PROMPT,
        user=user,
        criteria=criteria,
        answer_schema=lambda spec: _answer_schema(count),
        structured=structured,
    )


def read_answer(value: object, response: dict) -> str:
    """A judge's ranking (a list of places, each a number or a list of numbers; or a string such as
    "2>1=3") as the rater's shown form, by position; InvalidResponse when it is not a whole ranking."""
    if isinstance(value, str):
        text = value.replace(" ", "")
    elif isinstance(value, list):
        places = [place if isinstance(place, list) else [place] for place in value]
        if any(isinstance(n, bool) or not isinstance(n, (int, str)) for place in places for n in place):
            raise InvalidResponse(f"ranking {snippet(json.dumps(value))} is not a list of article numbers")
        text = written(tuple(str(n).strip() for n in place) for place in places)
    else:
        raise InvalidResponse(f"ranking {snippet(json.dumps(value))} is not a list of places")
    if problems := answer_problems(text, response=response):
        raise InvalidResponse(f"ranking {snippet(json.dumps(value))}: {problems[0].rstrip('.')}")
    return text


# {criterion_key: (ranking by position, reason)} in the order asked; raises InvalidResponse.
parse_verdicts = verdicts_reader(read_answer)
