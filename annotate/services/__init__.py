"""Every write of the annotate app, one job per module.

- `catalogue`: importing topics, systems, articles and rubrics;
- `campaigns`: creating a campaign, opening and closing it, adding and removing its annotators;
- `claims`: handing out the next pair, expiring idle claims, opening an assignment;
- `answers`: the answer service, the one path for every human answer (page, API and imports,
  one by one or in bulk), checked by the campaign's protocol, with one audit trail;
- `labelling`: what blocks submission, submitting, and marked passages;
- `placeholders`: the topics, systems and text-less articles of labels-only
  campaigns, planned while their labels are checked and saved in bulk.

Reads live in `annotate.selectors`. The catalogue's names are re-exported here,
where they have always been imported from.
"""

from annotate.services.catalogue import (
    ImportSummary,
    PreparedArticle,
    article_prepare,
    articles_import,
    articles_prepare,
    criterion_set_import,
    topic_key,
    topic_slug,
)

__all__ = [
    "ImportSummary",
    "PreparedArticle",
    "article_prepare",
    "articles_import",
    "articles_prepare",
    "criterion_set_import",
    "topic_key",
    "topic_slug",
]
