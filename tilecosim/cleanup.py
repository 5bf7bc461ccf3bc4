"""What a command leaves behind when it does not finish.

* :data:`PENDING` holds the files and folders a command is creating.  The command line
  (:func:`tilecosim.cli.main`) removes them when the command is refused (exit 2) or stopped
  by a signal, and keeps them when it finishes (exit 0, 1 or 3).  A path that existed before
  the command is never claimed (:meth:`Pending.claim` returns False): outputs that replace a
  file are written beside it and renamed over it, so the old one stays until the new one is
  whole.
* :func:`stoppable` turns SIGINT and SIGTERM into :class:`KeyboardInterrupt`, after it has
  stopped every process this one started (simulators, compilers, solvers, pytest workers):
  children and grandchildren alike, found in ``/proc`` and frozen while they are still ours.
  :func:`stopping` tells worker threads not to report what the stop broke.

  The KeyboardInterrupt can be lost: a signal that lands in an at-fork hook, a finalizer or
  a weakref callback raises it where Python prints "Exception ignored" and goes on.  The
  signal is recorded all the same (:func:`caught_signal`), that printout is silenced, and
  the command line stops a command that finished after a signal as if the exception had
  reached it.  :func:`signals_held` keeps the signals out of places such as ``os.fork``.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

__all__ = ["PENDING", "Pending", "stoppable", "stopping", "caught_signal", "stop_descendants",
           "signals_held", "release_signals", "write_whole", "private_tmp"]


class Pending:
    """The paths a command is creating, newest last."""

    def __init__(self):
        self._paths: list[Path] = []
        self._lock = threading.Lock()

    def claim(self, path) -> bool:
        """Record ``path`` (a file or folder about to be created, with any of its folders
        that do not exist yet: the outermost of them is recorded) unless it exists already;
        True when something was recorded."""
        top = None
        for p in (Path(path).absolute(), *Path(path).absolute().parents):
            if p.exists() or p.is_symlink():
                break
            top = p
        if top is None:
            return False
        with self._lock:
            self._paths.append(top)
        return True

    def release(self, path) -> None:
        """``path`` is finished: keep it whatever happens next."""
        path = Path(path).absolute()
        with self._lock:
            self._paths = [p for p in self._paths if p != path]

    def keep(self) -> None:
        """The command finished: keep everything."""
        with self._lock:
            self._paths.clear()

    def undo(self) -> None:
        """Remove every claimed path, newest first."""
        with self._lock:
            paths, self._paths = self._paths[::-1], []
        for p in paths:
            try:
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                elif p.exists() or p.is_symlink():
                    p.unlink()
            except OSError:
                pass


#: the outputs of the running command
PENDING = Pending()

#: the signals that stop a command
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_STOP = threading.Event()
_ACTIVE: list[list[int]] = []        # the signals caught by the stoppable() in force


def stopping() -> bool:
    """True once SIGINT or SIGTERM has stopped the command."""
    return _STOP.is_set()


def caught_signal() -> int | None:
    """The signal that stopped the command, or None."""
    return _ACTIVE[-1][0] if _ACTIVE and _ACTIVE[-1] else None


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            kids.setdefault(int(fields[1]), []).append(int(entry))
    return kids


def descendants(pid: int | None = None) -> list[int]:
    """Every process below ``pid`` (default this one), parents before children."""
    if not os.path.isdir("/proc"):
        return []
    kids, out, todo = _children(), [], [pid or os.getpid()]
    while todo:
        for k in kids.get(todo.pop(), ()):
            out.append(k)
            todo.append(k)
    return out


def stop_descendants() -> None:
    """Stop every process below this one: freeze them with SIGSTOP, reading the tree again
    until it holds no unfrozen process (a frozen process cannot start another), then
    SIGKILL them all.  Killing a parent first would hand its children to init, out of
    reach; freezing first finds them all."""
    frozen: list[int] = []
    for _ in range(1000):
        new = [p for p in descendants() if p not in frozen]
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
        frozen += new
    for p in frozen:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


@contextmanager
def stoppable(stop_processes: bool = True):
    """Within: SIGINT and SIGTERM stop the processes this one started (unless
    ``stop_processes`` is False: the command stops its own), then raise KeyboardInterrupt in
    the main thread; further signals are ignored while the command cleans up.  Yields a
    list that receives the signal's number."""
    if _ACTIVE:                      # a command run by a command (the demo): one handler
        yield _ACTIVE[-1]
        return
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def handler(signum, frame):
        if caught:
            return
        caught.append(signum)
        _STOP.set()
        if stop_processes:
            stop_descendants()
        raise KeyboardInterrupt

    def unraisable(info):
        if caught and isinstance(info.exc_value, KeyboardInterrupt):
            return                   # the handler's, lost where Python cannot raise it
        hook(info)

    hook, sys.unraisablehook = sys.unraisablehook, unraisable
    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS
                if signal.getsignal(s) is not signal.SIG_IGN}    # nohup, a background job
    _ACTIVE.append(caught)
    try:
        yield caught
    finally:
        _ACTIVE.pop()
        sys.unraisablehook = hook
        for s, h in previous.items():
            signal.signal(s, h)
        _STOP.clear()


def write_whole(path, content) -> None:
    """Write ``content`` -- text, bytes, or a function that writes to the binary file it is
    given -- to ``path`` through a temporary file beside it and a rename: the file is whole
    or absent (an older one stays until the new one is complete; a symbolic link is written
    through and kept).  A new file is the command's until it finishes (:data:`PENDING`).
    Raises OSError."""
    target = Path(path).absolute()
    if target.is_symlink():
        target = target.resolve()
    PENDING.claim(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(content):
                content(f)
            else:
                f.write(content.encode() if isinstance(content, str) else content)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@contextmanager
def private_tmp():
    """Within: the temporary folder of this process and of every process it starts
    (``TMPDIR``) is a fresh ``tilecosim-*`` folder, removed on the way out, whatever was
    left in it: by a simulator or compiler killed mid-run, or a worker process that never
    ran its clean-up."""
    with signals_held():            # tempfile's probe file, the folder: whole or not at all
        folder = tempfile.mkdtemp(prefix="tilecosim-")
        before_env, before_mod = os.environ.get("TMPDIR"), tempfile.tempdir
        os.environ["TMPDIR"] = tempfile.tempdir = folder
    try:
        yield Path(folder)
    finally:
        with signals_held():
            tempfile.tempdir = before_mod
            if before_env is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = before_env
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def signals_held():
    """Within: SIGINT and SIGTERM wait (in the main thread), to be delivered on the way out.
    A process forked within starts with them blocked: it unblocks them itself
    (:func:`release_signals`)."""
    main = threading.current_thread() is threading.main_thread()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if main else None
    try:
        yield
    finally:
        if main:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def release_signals() -> None:
    """Unblock SIGINT and SIGTERM: the first step of a process forked in :func:`signals_held`."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
