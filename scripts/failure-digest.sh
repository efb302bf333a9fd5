#!/usr/bin/env bash
# Prints, last, the lines that say why a `go test` run failed: each panic or
# fatal runtime error with the first lines of its trace, and each FAIL line.
# A crash's goroutine dump can run to thousands of lines; CI shows the tail of
# the output, so without this the cause scrolls out of sight.
set -uo pipefail
log="${1:?usage: failure-digest.sh go-test-output}"
[ -f "$log" ] || exit 0
if ! grep -qE '^(panic: |fatal error: |--- FAIL|FAIL[[:space:]])' "$log"; then
	exit 0
fi
echo
echo "-- failure digest (from $log):"
# A panic or fatal error: the message, the test running, and the first frames.
grep -nE -A12 '^(panic: |fatal error: )' "$log" | head -60
grep -nE -B1 '^(SIGQUIT|panic: test timed out)' "$log" | head -6
# Failed tests with their first message line, and failed packages.
grep -nE -A2 '^\s*--- FAIL' "$log" | grep -vE '^\s*[0-9]+-\s*--- (PASS|SKIP)' | head -40
grep -nE '^FAIL[[:space:]]' "$log" | head -20
exit 0
