"""``python -m tilecosim`` and the ``tilecosim`` script (:func:`entry`).

Importing the command line takes about half a second (numpy, Amaranth); a SIGINT or SIGTERM in
that time ends the process at once, with one line and exit 130 or 143, since nothing has
started yet.  :func:`tilecosim.cli.main` then takes over the signals
(:func:`tilecosim.cleanup.stoppable`).
"""

import os
import signal
import sys


def _stopped_while_starting(signum, frame):
    os.write(2, f"tilecosim: stopped by {signal.Signals(signum).name} while starting; nothing "
                f"was done\n".encode())
    os._exit(128 + signum)


def entry() -> int:
    for s in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(s) is not signal.SIG_IGN:   # a background job keeps ignoring it
            signal.signal(s, _stopped_while_starting)
    # deferred: the handlers above must be in place before the second of imports below
    from tilecosim.cli import main
    code = main()
    # CPython 3.11 remembers a KeyboardInterrupt that left an exec() of a string (dataclasses
    # and namedtuples build their methods so; a signal can land there) and, under
    # ``python -m``, ends the process by SIGINT at exit although main caught it: exit -2 for a
    # SIGTERM.  Running a string again forgets it, and the exit code is main's.
    exec("")
    return code


if __name__ == "__main__":
    sys.exit(entry())
