#!/usr/bin/env python3
"""Runs the package's swift-testing tests one suite per process, several
processes side by side, and says in one line how the run ended.

Most of the slow tests wait: on a private sound server, on a live job that
runs for seconds of real time, on a binary they started. In one test process
those waits hold the few threads the Swift runtime gives tests (one per
core), and the run takes as long as the waits add up to. A process per
suite, WORKERS of them at a time, overlaps the waits; the slowest suites
start first so that the run ends close to when its longest suite does.

    python3 Scripts/run_tests.py TEST_BINARY [--workers N] [--skip REGEX]
        [--logs DIR] [--summary FILE] [--timeout SECONDS]

Each suite's console output is kept in DIR/<suite>.log and its xUnit report
in DIR/<suite>.xml. A line is printed as each suite ends (its time and
tests); a failing suite's issues are printed whole. Exits 1 when any suite
fails, crashes or outlives the timeout, or when no test ran. The closing
line is also written to FILE.
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor

# The suites that took longer than 10 s in a measured run (3 processes at a
# time), longest first: they start first. A suite not named here starts after
# them, in name order; a name that no longer exists is ignored, so a stale
# list costs only balance.
SLOWEST_FIRST = [
    "MicLoopCLITests.JackNativeTests",
    "MicLoopCLITests.RecordLiveTests",
    "RecordingTests.RecorderTests",
    "MicLoopCLITests.StopSignalTests",
    "MicLoopCLITests.LiveLoopbackTests",
    "FeedbackControlTests.SweepMeasurementTests",
    "MicLoopCLITests.LiveFaultTests",
    "MicLoopCLITests.HostileUseTests",
    "MeteringTests.RoomTalkTests",
    "MicLoopKitTests.LiveProcessorAllocationTests",
    "MicLoopCLITests.RecordCommandTests",
    "MicLoopCLITests.PipeWireNativeTests",
    "MicLoopCLITests.TonesCommandTests",
    "MicLoopCLITests.StationLiveTests",
    "ToneDecodingTests.CTCSSTests",
    "MicLoopKitTests.FileToneDecoderTests",
    "MicLoopKitTests.FeedbackLoopTests",
    "FeedbackControlTests.HowlGuardTests",
    "MeteringTests.SteadyNoiseTalkTests",
    "MicLoopCLITests.PipeWireCaptureTests",
    "MeteringTests.TalkDetectorTests",
    "ToneDecodingTests.SequenceDecoderTests",
    "FeedbackControlTests.RingOutPlanTests",
    "MeteringTests.BlockIndependenceTests",
    "MicLoopCLITests.JackCaptureTests",
    "MicLoopCLITests.ExamplesTests",
    "MicLoopCLITests.LiveMeterScreenTests",
    "MicLoopCLITests.StationOptionsTests",
    "MicLoopCLITests.LoudnessCommandTests",
    "MicLoopCLITests.ToneCommandTests",
]

# Serialized suites whose tests each start their own server: one process per
# test, so that their minutes of real time overlap.
SPLIT_BY_TEST = {"MicLoopCLITests.RecordLiveTests"}

# How much the suites that only compute yield to the live ones when the
# cores are busy (the `nice` increment of their processes).
COMPUTE_NICENESS = 10

# What a failing test's lines in the console log look like.
ISSUE_MARKERS = ("✘", "recorded an issue", "error:", "Fatal error", "Crash")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def suite_of(unit):
    """The suite (`Module.Suite`) a unit belongs to."""
    return unit.split("/", 1)[0]


def live_suites(sources):
    """The suites declared in a test file that tags anything `.live`: their
    tests keep time with a sound server and run at normal priority, ahead of
    the suites that only compute."""
    names = set()
    for folder, _, files in os.walk(sources):
        for name in files:
            if not name.endswith(".swift"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as source:
                text = source.read()
            if ".live" in text:
                names.update(re.findall(r"@Suite\b[^{]*?\bstruct\s+(\w+)", text, re.S))
    return names


def list_units(binary, skip):
    """What runs in one process each, slowest first: a suite, or one test of
    a suite in SPLIT_BY_TEST."""
    listed = subprocess.run(
        [binary, "--testing-library", "swift-testing", "--list-tests"],
        capture_output=True, text=True, check=True).stdout.split()
    units = {}
    for test in listed:
        if skip and re.search(skip, test):
            continue
        unit = test if suite_of(test) in SPLIT_BY_TEST else suite_of(test)
        units.setdefault(unit, []).append(test)
    rank = {name: index for index, name in enumerate(SLOWEST_FIRST)}
    order = sorted(units, key=lambda unit: (rank.get(suite_of(unit), len(rank)), unit))
    return order, units


def failures_in(report_path):
    try:
        root = ElementTree.parse(report_path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    return sum(len(case.findall("failure")) + len(case.findall("error"))
               for case in root.iter("testcase"))


def run_unit(binary, unit, is_live, logs, timeout):
    file_name = re.sub(r"[^A-Za-z0-9._-]+", "_", unit)
    log_path = os.path.join(logs, file_name + ".log")
    report_path = os.path.join(logs, file_name + ".xml")
    pattern = "^" + re.escape(unit) + ("" if "/" in unit else "/")
    started = time.monotonic()
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [binary, "--testing-library", "swift-testing", "--filter", pattern,
             "--xunit-output", report_path],
            stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=None if is_live else lambda: os.nice(COMPUTE_NICENESS))
        try:
            status = process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
            timed_out = True
    seconds = time.monotonic() - started
    failures = failures_in(report_path)
    passed = status == 0 and not timed_out and not failures
    if timed_out:
        why = f"still running after {timeout} s, stopped"
    elif status < 0:
        why = f"the test process died of signal {-status}"
    elif failures is None:
        why = f"the test process wrote no report (exit status {status})"
    else:
        why = f"{failures} failing tests" if failures else f"exit status {status}"
    return unit, passed, seconds, why, log_path


def issue_lines(log_path, limit=60):
    with open(log_path, encoding="utf-8", errors="replace") as log:
        lines = [ANSI.sub("", line.rstrip()) for line in log]
    picked = [line for line in lines if any(marker in line for marker in ISSUE_MARKERS)]
    return (picked or lines[-20:])[:limit]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--skip", help="leave out tests whose name matches this expression")
    parser.add_argument("--logs", default=".build/unit-test")
    parser.add_argument("--summary")
    parser.add_argument("--timeout", type=int, default=1200)
    parser.add_argument("--sources", default="Tests",
                        help="the test sources, read for the suites that are live")
    arguments = parser.parse_args()

    os.makedirs(arguments.logs, exist_ok=True)
    for name in os.listdir(arguments.logs):
        os.remove(os.path.join(arguments.logs, name))
    order, tests = list_units(arguments.binary, arguments.skip)
    live = live_suites(arguments.sources)
    started = time.monotonic()
    printing = threading.Lock()
    results = []

    def one(unit):
        is_live = suite_of(unit).split(".", 1)[-1] in live
        result = run_unit(arguments.binary, unit, is_live, arguments.logs, arguments.timeout)
        name, passed, seconds, why, log_path = result
        with printing:
            results.append(result)
            mark = "passed" if passed else "FAILED: " + why
            count = len(tests[name])
            print(f"{seconds:7.1f} s  {name} ({count} test{'s' * (count != 1)}) {mark}",
                  flush=True)
            if not passed:
                for line in issue_lines(log_path):
                    print("           " + line, flush=True)

    with ThreadPoolExecutor(max_workers=arguments.workers) as pool:
        list(pool.map(one, order))

    elapsed = time.monotonic() - started
    failed = [result[0] for result in results if not result[1]]
    count = sum(len(tests[unit]) for unit in order)
    suites = len({suite_of(unit) for unit in order})
    if not order:
        line = "tests: no test matched: nothing ran"
    elif failed:
        line = (f"tests: {len(failed)} of {len(order)} processes FAILED after {elapsed:.0f} s: "
                + ", ".join(sorted(failed)))
    else:
        line = (f"tests: {count} tests in {suites} suites passed after {elapsed:.0f} s, "
                f"{arguments.workers} processes at a time")
    print(line)
    if arguments.summary:
        with open(arguments.summary, "w") as summary:
            summary.write(line + "\n")
    sys.exit(0 if order and not failed else 1)


if __name__ == "__main__":
    main()
