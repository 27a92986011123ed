"""What judges tells the apps above it, which it may not import (imports run one way)."""

from django.dispatch import Signal

# Sent by `judges.engine.judge_run_execute` once a run it worked on has ended (finished, failed,
# stopped or at its budget), with `run` (the JudgeRun as stored) and `verdicts` (the units this run
# stored a verdict for). Calibration then queues the campaign's report
# (`calibration.tasks.report_warm_after_run`), as it does after an import.
run_finished = Signal()
