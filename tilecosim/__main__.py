"""``python -m tilecosim`` and the ``tilecosim`` script (:func:`entry`).

Importing the command line takes about half a second (numpy, Amaranth); a SIGINT or SIGTERM in
that time ends the process at once, with one line and exit 130 or 143, since nothing has
started yet.  :func:`tilecosim.cli.main` then takes over the signals
(:func:`tilecosim.cleanup.stoppable`).  A signal after the command has finished (its
output kept) has nothing left to stop: one line says so, and the exit status is the
command's; the process then ends at its last exit function, before Python's finalization,
which puts the signals back to their defaults before it frees the modules, and a signal in
that tenth of a second killed the process without a word (exit -2; make check saw it).
"""

import atexit
import os
import signal
import sys

#: the command's exit status once it has finished (None: not yet)
_status: int | None = None
#: a signal after that has been said (once)
_late_said = False


def _signalled(signum, frame):
    global _late_said
    name = signal.Signals(signum).name
    if _status is None:
        os.write(2, f"tilecosim: stopped by {name} while starting; nothing was done\n"
                    .encode())
        os._exit(128 + signum)
    if not _late_said:                               # once: the command's output is whole
        os.write(2, f"tilecosim: {name} came after the command finished; its output is "
                    f"complete\n".encode())
        _late_said = True


def _end() -> None:
    """The last exit function (registered first): the exit status is the command's, and
    Python's finalization after it, with the signals at their defaults, is skipped."""
    if _status is None:                              # main raised: Python reports it
        return
    held = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)   # from here to the exit: held back
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):                # a closed pipe: nothing more to say
            pass
    for s in sorted(signal.sigpending() & held):
        _signalled(s, None)                          # one held back is said all the same
    os._exit(_status)


def entry() -> int:
    global _status
    atexit.register(_end)
    for s in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(s) is not signal.SIG_IGN:   # a background job keeps ignoring it
            signal.signal(s, _signalled)
    # deferred: the handlers above must be in place before the second of imports below
    from tilecosim.cli import main
    code = main()
    # CPython 3.11 remembers a KeyboardInterrupt that left an exec() of a string (dataclasses
    # and namedtuples build their methods so; a signal can land there) and, under
    # ``python -m``, ends the process by SIGINT at exit although main caught it: exit -2 for a
    # SIGTERM.  Running a string again forgets it, and the exit code is main's.
    exec("")
    _status = code
    return code


if __name__ == "__main__":
    sys.exit(entry())
