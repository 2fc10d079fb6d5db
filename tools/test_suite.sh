#!/usr/bin/env bash
# The whole test suite (`make test`, README's second quick-start command), in three processes
# that overlap, so that it takes about as long as its longest part (issue 37: CI ≤ 30 min on this
# 2-core machine; one process took 32–34 min):
#
#   1. the browser tests, in the foreground (their output streams), in two pytest-xdist workers,
#      a test file to each at a time (`-n 2 --dist loadfile`: each worker has its own server and
#      browser; one worker left a core idle most of the time, waiting on pages and kernels);
#   2. the JupyterHub tests (tests/browser/test_hub.py, test_hub_proxy.py: a hub, accounts, nginx;
#      ~5 min, most of it waiting, 96 s of it for the idle culler), alongside;
#   3. the tests that need no browser (~4.5 min of CPU), alongside at nice 19: they take the CPU
#      the browser tests leave idle (at nice 10 they slowed the browser tests by ~2.5 min).
#
# The parts share nothing but the machine: each hub test makes its own hub, ports and accounts.
# The output of 2 and 3 follows that of 1, then a summary names every part's result and every
# rerun (a rerun is a bug report; CI shows the end of the output). With arguments, pytest runs
# once with them instead: `make test ARGS="tests/accounting/test_pld_two_grids.py -x"`.
set -u
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

if [ "$#" -gt 0 ]; then
  exec "$PY" -m pytest -q "$@"
fi

HUB=(tests/browser/test_hub.py tests/browser/test_hub_proxy.py)
logs=$(mktemp -d)
nice -n 19 "$PY" -m pytest -q -m "not browser" -p no:cacheprovider > "$logs/unit.log" 2>&1 &
unit=$!
"$PY" -m pytest -q -p no:cacheprovider "${HUB[@]}" > "$logs/hub.log" 2>&1 &
hub=$!
trap 'kill "$unit" "$hub" 2>/dev/null' INT TERM

"$PY" -m pytest -q -m browser -n 2 --dist loadfile --ignore="${HUB[0]}" --ignore="${HUB[1]}" 2>&1 \
  | tee "$logs/browser.log"
rc=${PIPESTATUS[0]}
wait "$hub"; rc_hub=$?
wait "$unit"; rc_unit=$?

echo "==== the JupyterHub tests (run alongside) ===="
cat "$logs/hub.log"
echo "==== the tests that need no browser (run alongside, at nice 19) ===="
cat "$logs/unit.log"
echo "==== summary ===="
for part in browser hub unit; do
  log="$logs/$part.log"
  sed -n '/rerun(s): each is a cause to find/,/short test summary info/p' "$log" | sed '$d'
  echo "$part: $(tail -n 1 "$log")"
done
rm -rf "$logs"
for r in "$rc" "$rc_hub" "$rc_unit"; do
  [ "$r" -eq 0 ] || exit "$r"
done
exit 0
