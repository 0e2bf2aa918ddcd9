"""Runs one benchmark process (a system on a workload) to completion or to its timeout, and
measures its peak resident memory.

Peak memory is the child's own `ru_maxrss`, read from `os.wait4` when it is reaped, so each
(system, workload) process is measured alone. Timeouts:
* a child that prints the markers of peer_common.py (`@start I` before a timed step, `@end I S`
  after it) is killed when one timed step runs longer than `step_timeout_s`, or when the time
  outside timed steps (loading, opening, writing) exceeds `setup_timeout_s`;
* a child without markers (Warren's `bench`) gets `setup_timeout_s + repeat * step_timeout_s`
  in all, and its own samples are checked against `step_timeout_s` afterwards.
The child runs in its own process group, and the whole group is killed on timeout.

Memory: with `memory_limit_bytes`, the resident memory of the child's process group is polled
(`/proc/PID/statm` of every process in the group) and the group is killed once it passes the
limit: status "memory", so that a peer too big for the machine is reported as such instead of
driving the machine into swap or the kernel's OOM killer. A child the kernel kills with SIGKILL
is reported as "memory" too, with that reason.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import IO

from peer_common import MARK_END, MARK_START

POLL_S = 0.05


@dataclass
class Outcome:
    """What became of one child process."""

    status: str  # "ok", "timeout", "memory" or "error"
    exit_code: int | None
    peak_rss_bytes: int
    wall_s: float
    detail: str = ""


@dataclass
class Progress:
    """What the child's markers said so far; written by the reader thread, read by the watcher."""

    step_started: float | None = None
    idle_since: float = field(default_factory=time.monotonic)
    steps_done: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def follow_markers(stream: IO[str], log: IO[str], progress: Progress) -> None:
    """Copies the child's standard output to `log`, noting where each timed step begins/ends."""
    for line in stream:
        log.write(line)
        log.flush()
        words = line.split()
        with progress.lock:
            if words and words[0] == MARK_START:
                progress.step_started = time.monotonic()
            elif words and words[0] == MARK_END:
                progress.step_started = None
                progress.idle_since = time.monotonic()
                progress.steps_done += 1


def overdue(progress: Progress, step_timeout_s: float, setup_timeout_s: float) -> str | None:
    """Why the child must be stopped now, or None."""
    now = time.monotonic()
    with progress.lock:
        if progress.step_started is not None:
            if now - progress.step_started > step_timeout_s:
                return f"timed step {progress.steps_done} ran past {step_timeout_s:g} s"
            return None
        if now - progress.idle_since > setup_timeout_s:
            return f"setup ran past {setup_timeout_s:g} s"
    return None


PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def group_rss_bytes(group: int) -> int:
    """The resident memory of every process in process group `group` (0 where unreadable)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != group:
                continue
            with open(f"/proc/{entry}/statm") as f:
                total += int(f.read().split()[1]) * PAGE_BYTES
        except (OSError, ValueError, IndexError):
            continue  # the process ended meanwhile
    return total


def reap(pid: int, block: bool) -> tuple[int, int] | None:
    """(exit code, peak RSS in bytes) of a finished child, or None while it runs."""
    reaped, status, usage = os.wait4(pid, 0 if block else os.WNOHANG)
    if reaped == 0:
        return None
    # Linux reports ru_maxrss in KiB.
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024


def run_child(
    command: list[str],
    log_path: str,
    step_timeout_s: float,
    setup_timeout_s: float,
    total_timeout_s: float | None = None,
    cwd: str | None = None,
    memory_limit_bytes: int | None = None,
) -> Outcome:
    """Runs `command`, its output appended to `log_path`, and returns how it ended.

    With `total_timeout_s` (for a child without markers) only that limit applies to time;
    `memory_limit_bytes` bounds the resident memory of the child's process group.
    """
    assert step_timeout_s > 0 and setup_timeout_s > 0, (step_timeout_s, setup_timeout_s)
    started = time.monotonic()
    with open(log_path, "a") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=cwd,
            start_new_session=True,
        )
        progress = Progress()
        assert process.stdout is not None
        reader = threading.Thread(
            target=follow_markers, args=(process.stdout, log, progress), daemon=True
        )
        reader.start()
        limits = Limits(step_timeout_s, setup_timeout_s, total_timeout_s, memory_limit_bytes)
        reason, ended = watch(process.pid, progress, limits, started)
        process.returncode = ended[0]
        reader.join()
        process.stdout.close()
    wall_s = time.monotonic() - started
    exit_code, rss_bytes = ended
    if reason is not None and reason.startswith("resident memory"):
        return Outcome("memory", exit_code, rss_bytes, wall_s, reason)
    if reason is not None:
        return Outcome("timeout", exit_code, rss_bytes, wall_s, reason)
    if exit_code == -signal.SIGKILL:
        return Outcome("memory", exit_code, rss_bytes, wall_s, "killed by SIGKILL (the kernel's OOM killer?)")
    if exit_code != 0:
        return Outcome("error", exit_code, rss_bytes, wall_s, f"exit status {exit_code}")
    return Outcome("ok", exit_code, rss_bytes, wall_s)


def kill_group(pid: int) -> None:
    """Kills the child's process group (it leads its own session)."""
    # ProcessLookupError: it ended by itself meanwhile; reaping tells how.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


@dataclass(frozen=True)
class Limits:
    step_timeout_s: float
    setup_timeout_s: float
    total_timeout_s: float | None
    memory_limit_bytes: int | None


def watch(
    pid: int, progress: Progress, limits: Limits, started: float
) -> tuple[str | None, tuple[int, int]]:
    """Waits for the child, killing its group when overdue or over its memory limit:
    (why killed or None, reaped)."""
    polls = 0
    while True:
        ended = reap(pid, block=False)
        if ended is not None:
            return None, ended
        if limits.total_timeout_s is None:
            reason = overdue(progress, limits.step_timeout_s, limits.setup_timeout_s)
        elif time.monotonic() - started > limits.total_timeout_s:
            reason = f"ran past {limits.total_timeout_s:g} s in all"
        else:
            reason = None
        polls += 1
        # Memory every fourth poll (0.2 s): listing /proc costs a few milliseconds.
        if reason is None and limits.memory_limit_bytes is not None and polls % 4 == 0:
            resident = group_rss_bytes(pid)
            if resident > limits.memory_limit_bytes:
                reason = (
                    f"resident memory passed the limit of {limits.memory_limit_bytes / 2**30:.1f} GiB "
                    f"({resident / 2**30:.1f} GiB)"
                )
        if reason is not None:
            kill_group(pid)
            ended = reap(pid, block=True)
            assert ended is not None
            return reason, ended
        time.sleep(POLL_S)
