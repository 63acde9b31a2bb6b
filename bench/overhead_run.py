"""Running commands for bench/overhead.py: each in its own session, every wait bounded, SIGINT/SIGTERM polled."""
import csv
import io
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from overhead_common import INTERRUPT_GRACE_S, LEFTOVER_GRACE_S

# --- Running commands: each in its own session, every wait bounded, SIGINT/SIGTERM polled ------

class Stop:
    """The first SIGINT or SIGTERM this process received (0: none). The handler only records it:
    every wait below polls it, so no exception lands in the middle of writing a file."""
    signum = 0


def on_signal(signum, frame):  # noqa: ARG001 (signal handler's signature)
    if not Stop.signum:
        Stop.signum = signum


def group_alive(pgid):
    """Whether a process of process group `pgid` still runs. Zombies do not count: they hold
    nothing, and where PID 1 reaps no orphan (containers) an orphan killed stays one for ever."""
    try:
        names = os.listdir("/proc")
    except OSError:
        names = None
    if not names or not os.path.exists("/proc/self/stat"):  # no /proc: ask the kernel
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # state ppid pgrp ...: after "(comm)"
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


def stop_group(pgid, grace):
    """SIGTERM to process group `pgid`, SIGKILL to what is left after `grace` seconds; waits at
    most grace + 5 s in all. True when nothing of the group runs any more."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if not group_alive(pgid):
            return True
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return True
            time.sleep(0.05)
    return not group_alive(pgid)


def run_process(argv, env, timeout, out_file, grace, what="", stderr=subprocess.STDOUT):
    """Runs argv in a session of its own (stdin /dev/null; stdout to the open file `out_file`, and
    stderr too unless `stderr` says otherwise) for at most `timeout` seconds. Returns (wall
    seconds, status): status is the exit status, "timeout" (stopped at `timeout`: the wall time
    is then a lower bound), "interrupted" (Stop.signum was set) or "cannot start: ...". Whatever
    is left of the process group after the command's end, its time limit or an interrupt is sent
    SIGTERM, then SIGKILL after a grace (`grace` seconds at the time limit)."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out_file, stderr=stderr,
                             start_new_session=True)
    except OSError as e:
        return time.monotonic() - start, f"cannot start: {e.strerror}"
    # The exit time is taken by a thread blocked in waitpid, so that it is exact while this thread
    # polls the time limit and Stop.
    ended = []
    waiter = threading.Thread(target=lambda: (p.wait(), ended.append(time.monotonic())), daemon=True)
    waiter.start()
    deadline = start + timeout
    while True:
        waiter.join(0.05)
        if ended:
            wall, status, g = ended[0] - start, p.returncode, LEFTOVER_GRACE_S
            break
        now = time.monotonic()
        if Stop.signum:
            wall, status, g = now - start, "interrupted", min(grace, INTERRUPT_GRACE_S)
            break
        if now >= deadline:
            wall, status, g = now - start, "timeout", grace
            break
    if isinstance(status, int) and group_alive(p.pid):
        print(f"overhead: {what or argv[0]}: processes of its group still ran after it exited: stopping them",
              file=sys.stderr)
    if not stop_group(p.pid, g):
        print(f"overhead: {what or argv[0]}: processes of its group (id {p.pid}) still run after SIGKILL",
              file=sys.stderr)
    waiter.join(5.0)
    return wall, status


def run_one(argv, env, timeout, log, grace=10.0, what=""):
    """(wall seconds, status) of one run (run_process); stdout and stderr go to the file `log`."""
    full = dict(os.environ)
    full.pop("RFPROF_STEP_PASS_START", None)  # refused without RFPROF_REPLAY=step; command_for adds it back
    full.update(env)
    with open(log, "wb") as f:
        return run_process(argv, full, timeout, f, grace, what)


def command_output(argv, timeout=60):
    """stdout of a short command, or None when it could not run or did not exit 0."""
    with tempfile.TemporaryFile() as f:
        _, status = run_process(argv, None, timeout, f, 2.0, stderr=subprocess.DEVNULL)
        if status != 0:
            return None
        f.seek(0)
        return f.read().decode("utf-8", "replace")


def log_path(out, workload, mode, repeat):
    return os.path.join(out, "logs", f"{workload}-{mode}-{repeat}.log")


def first_rfprof_line(log):
    """The first line of `log` that rfprof wrote ("rfprof: ..."), or ""."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("rfprof:"):
                    return line.strip()
    except OSError:
        pass
    return ""


def last_line(log):
    """The last non-empty line of `log` (at most 200 characters), or ""."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def write_atomic(path, text):
    """Writes `text` to path + ".tmp", then renames it: a reader (or an interrupt) never sees a
    half-written file, only the previous one or the new one."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def csv_text(columns, rows):
    buf = io.StringIO()
    wr = csv.DictWriter(buf, fieldnames=columns)
    wr.writeheader()
    wr.writerows(rows)
    return buf.getvalue()


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
