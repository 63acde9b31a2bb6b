#!/usr/bin/env python3
"""Was the SIGKILL bound kept? Compares a killed run's trace with the time of the kill (issue 6).

    scripts/kill_bound.py SUMMARY_JSON KILL_NS [--flush-ms 1000]

SUMMARY_JSON is rfanalyze's summary.json of the trace the killed process left (its .part);
KILL_NS the time the signal was sent, Unix epoch ns (`date +%s%N`), the clock CUPTI time stamps
use on Linux. The bound (docs/failure-modes.md): every record older than the flush interval is
readable after a SIGKILL. The writer writes everything recorded before each flush; the trace's
last event (summary.json last_event_ns) was recorded before the last flush that reached the
file. So if that event is at most --flush-ms before the kill, every record older than --flush-ms
was flushed: the bound is shown. A longer gap does not disprove it: the application may have
recorded nothing in between.

Prints one line and exits 0 when the bound is shown, 1 when it is not, 2 on bad input.
"""
import argparse
import json
import sys


def gap_line(summary, kill_ns, flush_ms):
    """(shown, line) for one summary.json (a dict) and the kill time. Raises ValueError when the
    summary has no trace, no last event, or a kill time outside the trace's clock."""
    traces = summary.get("traces") or []
    if len(traces) != 1:
        raise ValueError(f"expected the summary of one trace, found {len(traces)}")
    t = traces[0]
    last, start = t.get("last_event_ns"), t.get("start_ns")
    if last is None:
        raise ValueError("the trace records no event (last_event_ns is null)")
    if start is not None and not start <= kill_ns <= start + 7 * 24 * 3600 * 10**9:
        raise ValueError(f"the kill time {kill_ns} is not within a week after the trace's start "
                         f"{start}: not the same clock?")
    gap_ms = (kill_ns - last) / 1e6
    truncated = "truncated" if t.get("truncated") else "finished"
    if gap_ms <= flush_ms:
        return True, (f"last recorded event {gap_ms:.1f} ms before the kill ({truncated} trace): every record "
                      f"older than {flush_ms:g} ms was kept")
    return False, (f"last recorded event {gap_ms:.1f} ms before the kill ({truncated} trace), more than "
                   f"{flush_ms:g} ms: the bound is not shown (records lost, or nothing recorded then)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("summary", help="rfanalyze's summary.json of the killed run's trace")
    ap.add_argument("kill_ns", type=int, help="time of the kill, Unix epoch ns (date +%%s%%N)")
    ap.add_argument("--flush-ms", type=float, default=1000, help="the flush interval (RFPROF_FLUSH_MS)")
    args = ap.parse_args(argv)
    try:
        with open(args.summary, encoding="utf-8") as f:
            summary = json.load(f)
        shown, line = gap_line(summary, args.kill_ns, args.flush_ms)
    except (OSError, ValueError) as e:
        print(f"kill_bound: {args.summary}: {e}", file=sys.stderr)
        return 2
    print(line)
    return 0 if shown else 1


if __name__ == "__main__":
    sys.exit(main())
