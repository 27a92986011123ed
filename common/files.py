"""Files that readers see whole or not at all.

Every command that writes a file the user asked for goes through `atomic_files`:
the text goes to a hidden side file in the same folder, is flushed to disk, and
replaces the real name only when everything has been written. A crash or an error
leaves the old files as they were and no side files behind.
"""

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def atomic_files(*paths: Path) -> Iterator[list[TextIO]]:
    """Text streams for `paths`, in order; all of them appear at their names together, on success only.

    The renames happen one after another once every stream is complete, so a set of
    files (an export and its companions) is never left half-written.
    """
    temps: list[str] = []
    try:
        with ExitStack() as stack:
            streams = []
            for path in paths:
                fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
                temps.append(temp)
                streams.append(stack.enter_context(os.fdopen(fd, "w", encoding="utf-8", newline="")))
            yield streams
            for stream in streams:
                stream.flush()
                os.fsync(stream.fileno())
        for temp, path in zip(temps, paths):
            _readable_as_usual(temp)
            os.replace(temp, path)
    except BaseException:
        for temp in temps:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
        raise


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the new one, never half of it."""
    with atomic_files(path) as (stream,):
        stream.write(text)


def _readable_as_usual(temp: str) -> None:
    # mkstemp makes files 0600; what we write is as readable as any file the user writes.
    if sys.platform != "win32":
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
