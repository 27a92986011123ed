"""Long id lists cut into batches, so that an `IN (...)` query stays under the databases' limits
on bound parameters (SQLite's 32,766 and PostgreSQL's 65,535)."""

from collections.abc import Iterator, Sequence

BATCH = 5000


def batches[T](values: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """`values` in consecutive slices of at most `size` (none for an empty sequence)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
