"""Locks on a campaign's row that make two of its rules hold under concurrency.

- Pre-registration: a study plan is frozen before the first answer (calibration.plan.study). Every
  write of a human answer (a label, an overall answer, a one-article answer, a marked passage, and
  every import of them) takes `answers_share_lock`; the freeze takes `answers_freeze_lock` and only
  then looks for answers. On PostgreSQL the first is FOR KEY SHARE (answers never wait for each
  other), the second FOR UPDATE (it waits for every answer under way to commit, and answers wait
  for it). So a freeze either sees an answer and refuses, or lands before it.
- Roles: nobody is both an annotator and an adjudicator of a campaign. Adding either takes
  `roles_lock` (FOR NO KEY UPDATE: two role changes of one campaign queue; answers do not wait).

On SQLite every transaction begins IMMEDIATE (config/settings.py): it holds the database's write
lock from its first statement, which serialises these writes already; the functions do nothing there.
Each must be called inside the transaction whose writes it guards.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Q

from annotate.models import Answer, Assignment, Campaign, Label, Span

_STRENGTH = {"roles": "FOR NO KEY UPDATE"}
# The first key of the answers' advisory locks (the second is the campaign's id): a number of this
# project's own, so that another application's advisory locks on the database cannot collide with it.
ANSWERS_LOCK_SPACE = 0x50415752  # "PAWR"
_ADVISORY = {"share": "pg_advisory_xact_lock_shared", "freeze": "pg_advisory_xact_lock"}


def _lock(campaign_id: int, strength: str) -> None:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a campaign lock is taken inside the transaction it guards")
    if connection.vendor != "postgresql":
        return  # SQLite: the transaction holds the write lock already (BEGIN IMMEDIATE)
    with connection.cursor() as cursor:
        if strength in _ADVISORY:
            cursor.execute(f"SELECT {_ADVISORY[strength]}(%s, %s)", [ANSWERS_LOCK_SPACE, campaign_id])
        else:
            cursor.execute(f"SELECT 1 FROM {Campaign._meta.db_table} WHERE id = %s {_STRENGTH[strength]}", [campaign_id])


def answers_share_lock(campaign_id: int) -> None:
    """Taken by every write of a human answer to the campaign, before it writes."""
    _lock(campaign_id, "share")


def answers_freeze_lock(campaign_id: int) -> None:
    """Taken by freezing the campaign's study plan, before it looks for answers."""
    _lock(campaign_id, "freeze")


def roles_lock(campaign_id: int) -> None:
    """Taken by adding annotators or adjudicators, before it checks the other list."""
    _lock(campaign_id, "roles")


def first_answer_exists(campaign: Campaign) -> bool:
    """Whether any human answer of any kind is stored for the campaign: a pairwise label, an overall
    answer, a one-article answer or a marked passage (typed or imported)."""
    return (
        Label.objects.filter(assignment__pair__campaign=campaign).exclude(winner="", rationale="").exists()
        or Assignment.objects.filter(pair__campaign=campaign).exclude(overall="").exists()
        or Answer.objects.filter(assignment__pair__campaign=campaign).filter(~Q(value="") | ~Q(rationale="")).exists()
        or Span.objects.filter(assignment__pair__campaign=campaign).exists()
    )
