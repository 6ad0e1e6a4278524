#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# The results page (make report-html, results/index.html) in a real
# browser: Debian's headless Chromium (scripts/deps/check.txt) opens the
# page of tests/fixtures/report/results (a failure, a kernel report, a
# LOST test, a variant that never ran), its DOM and its layout are
# checked, and a screenshot is taken (scripts/report-screenshot, which
# also makes README's docs/report.png).

load ../helpers

FIXTURE=$TOP/tests/fixtures/report

setup() {
	command -v chromium >/dev/null || {
		echo "chromium is missing: make test installs scripts/deps/check.txt"
		return 1
	}
	R=$BATS_TEST_TMPDIR/results
	cp -r "$FIXTURE/results" "$R"
	export BASELINE=$FIXTURE/baseline
}

# chrome ARGS...: headless Chromium with a profile of the test's own.
chrome() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$BATS_TEST_TMPDIR/profile" --window-size=1280,900 "$@" \
		2>>"$BATS_TEST_TMPDIR/chromium.log"
}

# probe PAGE: the page's DOM after Chromium laid it out, with a line the
# probe script (added to a copy, the page has none) writes into it: the
# charts' SVG elements drawn at a size, and where the first problem of
# each kind at the top ends, against the window's height (the first
# screen).
probe() {
	local copy=${1%.html}-probe.html
	# (after </html> the parser puts it at the end of the body)
	cat "$1" - >"$copy" <<'JS'
<script>
const r = ["height=" + window.innerHeight];
r.push("svg=" + [...document.querySelectorAll("#charts svg")].filter(function (s) {
	const b = s.getBoundingClientRect(); return b.width > 100 && b.height > 50; }).length);
for (const k of ["fail", "LOST", "kernel", "error"]) {
	const e = document.querySelector("#problems li.k-" + k);
	r.push(k + "=" + (e ? Math.round(e.getBoundingClientRect().bottom) : "none"));
}
document.body.setAttribute("data-probe", r.join(" "));
</script>
JS
	chrome --dump-dom "file://$copy" >"$BATS_TEST_TMPDIR/dom.html"
	sed -n 's/.*data-probe="\([^"]*\)".*/\1/p' "$BATS_TEST_TMPDIR/dom.html"
}

# on_first_screen PROBE KIND: KIND's first line at the top ends within the first screen
on_first_screen() {
	local h v
	h=$(grep -o 'height=[0-9]*' <<<"$1" | cut -d= -f2)
	v=$(grep -o "$2=[0-9a-z]*" <<<"$1" | cut -d= -f2)
	if [ -z "$v" ] || [ "$v" = none ] || [ "$v" -gt "$h" ]; then
		echo "$2 is not on the first screen: $1"
		return 1
	fi
}

@test "make report-html: the page in Chromium has every variant, a failing cell links to its output and console excerpt, the charts are drawn; a screenshot" {
	run make -s -C "$TOP" report-html RESULTS="$R"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "results page: $R/index.html" ]
	p=$(probe "$R/index.html")
	echo "probe: $p"
	dom=$BATS_TEST_TMPDIR/dom.html
	# every variant asked for, the one that never ran too
	for v in default debug isolated bench-icount rt; do
		grep -q "<tr id=\"variant-$v\">" "$dom" || { echo "no row of $v"; return 1; }
	done
	# the failing cell of default's kselftest links to the failure, which
	# shows the end of its output and links to its console log excerpt
	cell=$(grep -o '<td class="cell s-fail"[^>]*><a href="#fail-[0-9]*"' "$dom" | head -n1)
	[ -n "$cell" ]
	anchor=${cell##*#}
	anchor=${anchor%\"}
	article=$(sed -n "/<article id=\"$anchor\">/,/<\/article>/p" "$dom")
	[[ "$article" == *"kselftest/futex/run.sh/futex_wake private returned: 0 Success"* ]]
	[[ "$article" == *"waiter failed errno 110"* ]]
	log=$(grep -o 'href="#log-default-[0-9]*"' <<<"$article" | head -n1 | cut -d'#' -f2 | tr -d '"')
	[ "$log" = log-default-2118 ]
	grep -q "<div id=\"$log\">" "$dom"
	grep -A30 "<div id=\"$log\">" "$dom" | grep -q 'class="mark">  2118  # not ok 1 futex_wake private'
	# the kernel report, decoded to file:line
	grep -q 'lkdtm_EXCEPTION (drivers/misc/lkdtm/bugs.c:122)' "$dom"
	# the charts: SVG elements in the DOM, laid out at a size
	svg=$(grep -o 'svg=[0-9]*' <<<"$p" | cut -d= -f2)
	[ "$svg" -ge 3 ]
	# nothing outside the page: no resource it would load
	run grep -Eo '(src|href)="[^#d][^"]*"' "$R/index.html"
	[ "$output" = "" ]
	"$TOP/scripts/report-screenshot" --page "$R/index.html" "$BATS_TEST_TMPDIR/page.png"
	[ "$(head -c 8 "$BATS_TEST_TMPDIR/page.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/page.png")" -gt 20000 ]
}

@test "the results page: a failure, a kernel report and a LOST test are on the first screen, also among many failures" {
	# forty more failures in default: the top still shows every kind
	python3 - "$R/default/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for i in range(40):
    r["tests"].append({"id": "umcg/extra/global.t%d" % i, "suite": "umcg",
                       "program": "extra", "status": "fail", "line": 100 + i,
                       "excerpt": "<b>not bold</b> %d" % i, "metrics": {}})
json.dump(r, open(sys.argv[1], "w"))
PY
	"$TOP/scripts/pipeline" report-html "$R" >/dev/null
	p=$(probe "$R/index.html")
	echo "probe: $p"
	for k in fail LOST kernel error; do
		on_first_screen "$p" "$k"
	done
	# guest text is text
	grep -q '&lt;b&gt;not bold&lt;/b&gt; 7' "$BATS_TEST_TMPDIR/dom.html"
	run ! grep -q '<b>not bold' "$BATS_TEST_TMPDIR/dom.html"
}

@test "the page of a CI download (results-<variant>/, no summary.json) stands alone: no file beside it" {
	d=$BATS_TEST_TMPDIR/download
	mkdir -p "$d"
	for v in default isolated; do cp -r "$R/$v" "$d/results-$v"; done
	run "$TOP/scripts/pipeline" report-html --out "$BATS_TEST_TMPDIR/alone/index.html" "$d"
	[ "$status" -eq 2 ]
	mkdir -p "$BATS_TEST_TMPDIR/alone"
	"$TOP/scripts/pipeline" report-html --out "$BATS_TEST_TMPDIR/alone/index.html" "$d"
	rm -rf "$d"
	[ "$(ls "$BATS_TEST_TMPDIR/alone")" = index.html ]
	chrome --dump-dom "file://$BATS_TEST_TMPDIR/alone/index.html" >"$BATS_TEST_TMPDIR/dom.html"
	grep -q '<tr id="variant-default">' "$BATS_TEST_TMPDIR/dom.html"
	grep -q '<tr id="variant-isolated">' "$BATS_TEST_TMPDIR/dom.html"
	grep -q 'id="log-default-2118"' "$BATS_TEST_TMPDIR/dom.html"
}

@test "make report-html: no results is exit 2 with the reason; a page the browser cannot be given is no screenshot" {
	run make -s -C "$TOP" report-html RESULTS="$BATS_TEST_TMPDIR/none"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not a directory of results"* ]]
	mkdir "$BATS_TEST_TMPDIR/empty"
	run "$TOP/scripts/pipeline" report-html "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 2 ]
	run "$TOP/scripts/report-screenshot"
	[ "$status" -eq 2 ]
}

@test "results-page (the end of make, matrix, test-variant): the run's status stays, the page is written, the run recorded once; no results is a note" {
	RESULTS=$R run "$TOP/scripts/results-page" --after sh -c 'exit 3'
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"results page: $R/index.html"* ]]
	grep -q '<tr id="variant-debug">' "$R/index.html"
	runs=$PIPELINE_CACHE/report-history/runs.json
	[ "$(jq '.runs | length' "$runs")" = 1 ]
	# the same run's page again: no second point in the history
	RESULTS=$R run "$TOP/scripts/results-page"
	[ "$status" -eq 0 ]
	[ "$(jq '.runs | length' "$runs")" = 1 ]
	RESULTS=$BATS_TEST_TMPDIR/none run "$TOP/scripts/results-page" --after true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"note: no results page written: $BATS_TEST_TMPDIR/none is not a directory of results"* ]]
}
