"""Files uploaded in the browser, made into the paths the import services read (no Django here).

The import commands read files and folders; an upload becomes a temporary file (or, for a
benchmark's zip, a temporary folder) that the same readers then read, so the web and the CLI
import alike. A zip is unpacked only after its listing is checked: no member outside the folder,
no link, at most `max_members` members and `max_bytes` unpacked in all (a small zip can unpack
to gigabytes).
"""

from __future__ import annotations

import stat
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath


class UploadError(Exception):
    """The uploaded file as a whole cannot be used; the message says why, for the person who sent it."""


def megabytes(n: int) -> str:
    return f"{n / 1_048_576:.1f} MB"


@contextmanager
def upload_saved(chunks: Iterable[bytes], *, name: str, size: int, max_bytes: int) -> Iterator[Path]:
    """The upload written to a temporary file named like the original (its suffix tells the readers
    the format), removed afterwards. Refused before writing when `size` exceeds `max_bytes`."""
    if size > max_bytes:
        raise UploadError(f"{name}: {megabytes(size)} is more than the upload limit of {megabytes(max_bytes)} (UPLOAD_MAX_BYTES)")
    base = PurePosixPath(name.replace("\\", "/")).name or "upload"
    with tempfile.TemporaryDirectory(prefix="pairwise-upload-") as folder:
        path = Path(folder) / base
        with path.open("wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        yield path


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if name.startswith(("/", "\\")) or (parts and parts[0].endswith(":")) or ".." in parts:
        return f"{name}: a member outside the archive's folder"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return f"{name}: a symbolic link"
    return None


def zip_unpacked(path: Path, into: Path, *, max_bytes: int, max_members: int) -> Path:
    """Unpacks the zip at `path` into the folder `into` after checking its listing; returns the folder
    to read: `into`, or the one folder the archive holds at its top (a zipped repository)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UploadError(f"{path.name}: not a zip archive ({exc})") from exc
    with archive:
        members = archive.infolist()
        if len(members) > max_members:
            raise UploadError(f"{path.name}: {len(members):,} members, more than the limit of {max_members:,} (UPLOAD_ZIP_MAX_MEMBERS)")
        unpacked = sum(info.file_size for info in members)
        if unpacked > max_bytes:
            raise UploadError(
                f"{path.name}: unpacks to {megabytes(unpacked)}, more than the limit of {megabytes(max_bytes)} (UPLOAD_ZIP_MAX_BYTES)"
            )
        problems = [problem for info in members if (problem := _member_problem(info))]
        if problems:
            raise UploadError(f"{path.name}: not unpacked: " + "; ".join(problems[:5]))
        written = 0
        for info in members:
            target = into.joinpath(*PurePosixPath(info.filename.replace("\\", "/")).parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(info) as source, target.open("wb") as sink:
                    # The listing's sizes may lie: count what is really written.
                    while block := source.read(1 << 20):
                        written += len(block)
                        if written > max_bytes:
                            raise UploadError(f"{path.name}: unpacks to more than {megabytes(max_bytes)} (UPLOAD_ZIP_MAX_BYTES)")
                        sink.write(block)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
                raise UploadError(f"{path.name}: {info.filename} cannot be unpacked ({exc})") from exc
    entries = [entry for entry in into.iterdir() if entry.name != "__MACOSX"]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return into
