# report.html in headless Chromium: it renders, logs no console error, every
# figure is an inline SVG in the rendered DOM, nothing is fetched from
# anywhere. The screenshot is kept in the build tree:
# tests/report/report-screenshot.png. Skipped (77) without chromium.
. "$top_srcdir/tests/setup"
chromium=
for c in ${CHROMIUM:-} chromium chromium-browser google-chrome; do
	if command -v "$c" > /dev/null 2>&1; then chromium=$c; break; fi
done
[ -n "$chromium" ] || { echo "SKIP: no chromium (Debian package chromium)"; exit 77; }
sed "s|@ENGINE@|$top_srcdir/tests/report/engine.sh|" "$top_srcdir/tests/report/known.yaml.in" > known.yaml
"$MATRIX" run known.yaml --out run > /dev/null 2>&1 || [ $? = 1 ] || fail "run failed"
"$MATRIX" report --quiet run
page="file://$work/run/report.html"
# self-contained: no script, no stylesheet link, no external source
! grep -q '<script\|<link\|src=' run/report.html || fail "report.html refers to something outside it"
figures=$(grep -c '<figure' run/report.html)
expect_eq "$figures" 7 "figures in the page"
flags="--headless --disable-gpu --no-sandbox --no-first-run --disable-extensions --user-data-dir=$work/profile"
# a proxy that cannot be reached: any network request would fail and be logged
timeout 120 "$chromium" $flags --proxy-server=127.0.0.1:9 --dump-dom "$page" > dom.html 2> dom.err ||
	fail "chromium could not render the page: $(tail -n 3 dom.err)"
expect_eq "$(grep -o '<svg' dom.html | wc -l | tr -d ' ')" "$figures" "inline SVGs in the rendered DOM"
expect_eq "$(grep -o '<figure' dom.html | wc -l | tr -d ' ')" "$figures" "figures in the rendered DOM"
expect_grep 'id="table-effects"' dom.html "effects table rendered"
timeout 120 "$chromium" $flags --proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0 \
	--window-size=1200,2400 --screenshot="$work/shot.png" "$page" > shot.out 2> shot.err ||
	fail "chromium could not take a screenshot: $(tail -n 3 shot.err)"
if grep -E 'CONSOLE|ERR_PROXY|net::ERR' shot.err > console.txt; then
	cat console.txt >&2
	fail "console errors or network requests while rendering report.html"
fi
[ -s shot.png ] || fail "no screenshot"
# PNG magic
expect_eq "$(od -An -c -N4 shot.png | tr -d ' ')" '211PNG' "screenshot is a PNG"
out=${top_builddir:-$work}/tests/report
mkdir -p "$out" && cp shot.png "$out/report-screenshot.png"
echo "screenshot: $out/report-screenshot.png"
echo ok
