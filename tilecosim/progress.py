"""One progress bar for the long runs (``regress``, ``bench``), on standard error.

On a terminal the bar is redrawn in place (at most five times a second); otherwise -- a CI
log, a pipe -- one line is printed every ten seconds and at the end, so logs stay short.
"""

import sys
import time

__all__ = ["Progress"]


class Progress:
    """``Progress("regress", total, "scenarios")``; call ``update(done, note)`` as work
    completes (``note``, e.g. "2 mismatches", follows the count)."""

    WIDTH = 30

    def __init__(self, label: str, total: int, unit: str, stream=None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = 0.0

    def update(self, done: int, note: str = "") -> None:
        now = time.perf_counter()
        if done < self.total and now - self._last < (0.2 if self.tty else 10):
            return
        self._last = now
        fill = self.WIDTH * done // max(1, self.total)
        line = (f"{self.label} [{'#' * fill}{'.' * (self.WIDTH - fill)}] {done}/{self.total} "
                f"{self.unit}" + (f", {note}" if note else ""))
        end = "" if self.tty and done < self.total else "\n"
        print(("\r" + line) if self.tty else line, end=end, file=self.stream, flush=True)
