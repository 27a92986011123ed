"""Campaigns worked through by several annotators at once, with real threads and the real services."""

import random
import threading
import time
from collections import Counter

from django.db import connections

from annotate.models import Criterion
from annotate.services import articles_import
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from annotate.sources import ArticleRecord, Batch, SystemRecord
from tests.calibration_builders import tiny_rubric

AGENTS = ["atlas_agent", "quill_researcher", "ember.v2", "north-star"]
REASON = "Reads more plainly here."


def wide_tiny_catalogue(topics: int = 20):
    """The 3-criterion rubric; `topics` topics, each written by the reference and the 4 agents."""
    criterion_set = tiny_rubric()
    batch = Batch(benchmark="wide-tiny")
    systems = ["wikipedia", *AGENTS]
    batch.systems = {key: SystemRecord(key=key, name=key, is_reference=key == "wikipedia") for key in systems}
    batch.articles = [
        ArticleRecord(topic=f"Topic {t:02d}", system=s, markdown=f"# Topic {t:02d}\n\nA text on topic {t} by {s}.\n")
        for t in range(topics)
        for s in systems
    ]
    articles_import(batch=batch)
    return criterion_set


def label_and_submit(assignment, user, draw: random.Random) -> None:
    """Answers every criterion through the real services (a random winner, a rationale) and submits."""
    for criterion in Criterion.objects.filter(criterion_set=assignment.pair.campaign.criterion_set).order_by("order"):
        label_save(
            assignment=assignment, criterion=criterion, user=user, position=draw.choice("12"), rationale=f"{user.username}: {REASON}"
        )
    assignment_submit(assignment=assignment, user=user)


def work_in_parallel(campaign, people, *, stop_after: int | None = None, pairs_each: int | None = None) -> list[int]:
    """Each person in their own thread claims, reads for a moment, labels and submits, until there is nothing
    left, `stop_after` assignments are submitted in all, or they did `pairs_each`. Returns the submitted
    pairs in the order the submissions landed."""
    barrier, lock = threading.Barrier(len(people)), threading.Lock()
    submitted, errors = [], []

    def worker(user, seed):
        draw = random.Random(seed)
        try:
            barrier.wait()
            for _ in range(pairs_each or 10_000):
                with lock:
                    if stop_after is not None and len(submitted) >= stop_after:
                        return
                work = assignment_claim_next(campaign=campaign, user=user)
                if work is None:
                    return
                time.sleep(draw.uniform(0.01, 0.03))  # reading the pair
                label_and_submit(work, user, draw)
                with lock:
                    submitted.append(work.pair_id)
        except Exception as exc:  # a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(user, i)) for i, user in enumerate(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return submitted


def complete_share(submitted: list[int], upto: int, needed: dict[int, int]) -> float:
    """Of the first `upto` submissions, the share whose pair then had its complete overlap set."""
    counts = Counter(submitted[:upto])
    return sum(n for pair, n in counts.items() if n >= needed[pair]) / upto
