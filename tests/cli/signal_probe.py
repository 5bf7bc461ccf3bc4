"""Run the command line (``tilecosim.__main__.entry``) with a SIGTERM sent to itself from a
place where Python handles a signal's exception badly, at a chosen moment:

    python -m tests.cli.signal_probe HOW MODULE:FUNCTION -- ARGS...

Just before ``MODULE.FUNCTION`` runs, the process signals itself

* ``exec``: within an ``exec()`` of a string, as when a dataclass is built (CPython then
  remembers the KeyboardInterrupt and, under ``-m``, would end the process by SIGINT);
* ``del``: within an object's ``__del__``, where Python prints "Exception ignored" and
  drops the KeyboardInterrupt;
* ``fork``: within an at-fork hook of the next ``os.fork`` (the function is ignored), where
  the same happens.

Used by tests/cli/test_signals.py; the moments a random signal hits these places are rare,
so the tests put it there.
"""

import importlib
import os
import signal
import sys


def _signal_self():
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(100):             # the handler runs here, at the next bytecode check
        pass


class _Dropped:
    def __del__(self):
        _signal_self()


def main() -> int:
    how, where, sep, *args = sys.argv[1:]
    assert sep == "--", "usage: HOW MODULE:FUNCTION -- ARGS..."
    if how == "fork":
        fired = []

        def after_in_parent():
            if not fired:
                fired.append(True)
                _signal_self()
        os.register_at_fork(after_in_parent=after_in_parent)
    else:
        module, name = where.split(":")
        mod = importlib.import_module(module)
        original = getattr(mod, name)

        def patched(*a, **k):
            if how == "exec":
                exec("_signal_self()", {"_signal_self": _signal_self})
            else:
                _Dropped()
            return original(*a, **k)
        setattr(mod, name, patched)
    sys.argv = ["tilecosim", *args]
    from tilecosim.__main__ import entry
    return entry()


if __name__ == "__main__":
    sys.exit(main())
