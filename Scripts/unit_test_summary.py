#!/usr/bin/env python3
"""Says how the unit, end-to-end and live tests ended, in one line: the test
runner's closing line from its console log, or, when the console lost it,
the counts from the runner's xUnit report. Exits 1 when the report holds a
failure or an error, whatever the console printed (the runner's own exit
status decides the rest).

    python3 Scripts/unit_test_summary.py LOG XUNIT_XML
    python3 Scripts/unit_test_summary.py --failures XUNIT_XML   (each failure in one line)
"""
import sys
import xml.etree.ElementTree as ElementTree


def closing_line(log_path):
    try:
        with open(log_path, encoding="utf-8", errors="replace") as log:
            lines = [line.strip() for line in log if "Test run with" in line]
    except OSError:
        return None
    return lines[-1] if lines else None


def report_counts(xml_path):
    try:
        root = ElementTree.parse(xml_path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key, "0"))
    return counts


def print_failures(xml_path):
    try:
        root = ElementTree.parse(xml_path).getroot()
    except (OSError, ElementTree.ParseError):
        return
    for case in root.iter("testcase"):
        for problem in list(case.findall("failure")) + list(case.findall("error")):
            message = " ".join((problem.get("message") or problem.text or "").split())
            print(f"unit-test: FAILED {case.get('classname')}.{case.get('name')}: {message[:400]}")


def main():
    if sys.argv[1] == "--failures":
        print_failures(sys.argv[2])
        return
    log_path, xml_path = sys.argv[1], sys.argv[2]
    line = closing_line(log_path)
    counts = report_counts(xml_path)
    failed = counts is not None and (counts["failures"] or counts["errors"])
    if line:
        print(line)
    elif counts:
        print(f"unit-test: the runner's closing line was lost from the console; its report: "
              f"{counts['tests']} tests, {counts['failures']} failures, {counts['errors']} errors, "
              f"{counts['skipped']} skipped")
    else:
        passed = 0
        try:
            with open(log_path, encoding="utf-8", errors="replace") as log:
                passed = sum("passed after" in line for line in log)
        except OSError:
            pass
        print(f"unit-test: the test runner printed no closing line and wrote no report "
              f"({passed} tests and suites reported passing)")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
