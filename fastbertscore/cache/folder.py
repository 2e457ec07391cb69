"""How the embedding cache meets the file system: who may read it, and what in it is never followed.

``cache_dir`` is trusted as far as its writers are: anyone who may write in it can plant a well-formed entry with
other numbers, so keep it writable only by people you trust. What the cache does on its own:

- It is private by default: the folder of one scorer identity (the fingerprint folder under ``cache_dir``) and its
  shard and ``tmp`` folders are made 0700, entries and ``settings.json`` 0600, whatever the umask; an older
  folder of the user's own is tightened to 0700 when a cache opens it. ``FASTBERTSCORE_CACHE_GROUP=1``
  (:data:`GROUP_VARIABLE`) shares a cache with a group instead: folders 0770 (a setgid bit is kept, so make
  ``cache_dir`` setgid and owned by the group: ``chgrp team dir && chmod 2770 dir``), entries 0640.
- It follows no link inside its folder: entries are opened with ``O_NOFOLLOW``; a fingerprint, shard or ``tmp``
  folder that is a symbolic link is refused, never read, written or swept (a sweep of stale temporary files
  through a linked ``tmp`` deleted files in the link's target).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: Set to 1 to share a cache with a group (folders 0770, entries 0640) instead of keeping it private.
GROUP_VARIABLE = "FASTBERTSCORE_CACHE_GROUP"
#: (folder, entry) modes of a private cache, the default.
PRIVATE_MODES = (0o700, 0o600)
#: (folder, entry) modes of a cache shared with a group (:data:`GROUP_VARIABLE`).
GROUP_MODES = (0o770, 0o640)


class NotFollowed(OSError):
    """A symbolic link (or something other than a folder) where the cache keeps a folder or an entry."""


def modes() -> tuple[int, int]:
    """The (folder, entry) modes this process gives: private, or the group's with :data:`GROUP_VARIABLE`."""
    shared = os.environ.get(GROUP_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")
    return GROUP_MODES if shared else PRIVATE_MODES


def real_folder(path: Path, mode: int) -> None:
    """Make the folder ``path`` with exactly ``mode`` unless it exists; a folder of this user's of another mode gets
    ``mode`` (its setgid bit kept).

    Raises:
        NotFollowed: ``path`` is a symbolic link or no folder.
        OSError: it cannot be made or looked at.
    """
    try:
        os.mkdir(path, mode)
    except OSError:
        if not os.path.lexists(path):  # not there and cannot be made (EEXIST first is not promised everywhere)
            raise
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise NotFollowed(f"{path} is a symbolic link; the cache follows none")
    if not stat.S_ISDIR(info.st_mode):
        raise NotFollowed(f"{path} is not a folder")
    owner = info.st_uid == getattr(os, "geteuid", lambda: info.st_uid)()
    if owner and stat.S_IMODE(info.st_mode) & 0o777 != mode:
        os.chmod(path, mode | (info.st_mode & stat.S_ISGID))


def read_entry(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of the entry ``path``, opened without following a link and without blocking (a named
    pipe planted in the folder cannot hang the call).

    Raises:
        FileNotFoundError: no entry (or no shard folder) there: a miss.
        NotFollowed: the entry or its shard folder is a link, or the entry is not a regular file.
        OSError: it cannot be read.
    """
    if stat.S_ISLNK(os.lstat(path.parent).st_mode):  # a file there fails the open below: the cache turns off
        raise NotFollowed(f"its folder {path.parent.name} is a symbolic link; it is never followed")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotFollowed("it is a symbolic link; it is never followed") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotFollowed("it is not a regular file")
        with os.fdopen(fd, "rb") as f:
            fd = -1  # the file object closes it
            return f.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)
