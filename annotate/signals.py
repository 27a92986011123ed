"""Signals annotate sends for other apps to act on. Annotate imports nothing of theirs: an app that
cares connects a receiver in its `AppConfig.ready()` (calibration re-runs the active sampler)."""

from django.dispatch import Signal

# Sent once an assignment's submission is committed (`services.labelling.assignment_submit`), with
# `pair_id` and `assignment_id`. Receivers run after the commit, outside the annotator's transaction,
# and must be quick: slow work goes to the task worker.
assignment_submitted = Signal()
