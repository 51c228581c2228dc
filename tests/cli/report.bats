#!/usr/bin/env bats
# report.bats - `fasweep report`: one heatmap cell per grid point
# of each group with the right counts per reason and status, escaped hostile
# names, any store (only failures, only baselines, several devices, one
# record), bad input; and a real browser: headless Chromium loads the page,
# --dump-dom shows the SVG cells, a --screenshot is not blank. Without a
# browser that test is a skip that says so, never a pass.

load helpers

CHECK="$REPO/tests/cli/report_check.py"

@test "report: the fixture store, one cell per grid point, the counts per reason and status" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" report --store "$STORE" --space "$REPO/spaces/l4.json" \
        -o r.html
    expect_status 0
    # the path written goes to stderr (stdout may be the page: -o /dev/stdout)
    expect_in "$stderr" "fasweep: wrote r.html (5 groups)"
    [ -z "$output" ] || flunk "report printed on stdout: $output"
    run python3 "$CHECK" r.html
    expect_status 0
    # the L4 space's 162 points: 72 accepted (5 ok, 3 failed, 64 not measured), 54 + 36 rejected
    expect_in "$output" "NVIDIA L4|b4.h8.s512.d64.nc|hot cells=162 missing=64 ok=5 rej-smem=36 rej-warp_rows=54 st-crashed=1 st-timeout=1 st-wrong=1"
    expect_in "$output" "NVIDIA L4|b4.h8.s512.d64.nc|cold cells=162 missing=70 ok=2 rej-smem=36 rej-warp_rows=54"
    # not the L4 space's GPU: laid over its records' own axes
    expect_in "$output" "NVIDIA H100 80GB HBM3|b4.h8.s512.d64.nc|hot cells=32 missing=20 ok=4 rej-warp_rows=8"
    expect_in "$output" "NVIDIA L4|b1.h2.s200.d128.c|hot cells=2 st-crashed=1 st-wrong=1"
    # self-contained: no script, nothing fetched
    expect_not_in "$(cat r.html)" "<script"
    expect_not_in "$(cat r.html)" "http://"
    expect_not_in "$(cat r.html)" "https://"
    # the baselines and a hover title
    expect_in "$(cat r.html)" "sdpa-flash 181.20 us"
    expect_in "$(cat r.html)" "needs 65536 B of shared memory"
}

@test "report: hostile names are escaped (a device named <script>alert(1)</script> shows as text)" {
    python3 - "$FIX/results.jsonl" >evil.jsonl <<'PY'
import json, sys
for i, l in enumerate(open(sys.argv[1])):
    r = json.loads(l)
    if r["key"]["device"] == "NVIDIA L4" and r["key"]["mode"] == "hot":
        r["key"]["device"] = "<script>alert(1)</script>"
        r["error"] = r["error"] and 'it said "<b>no</b>" & stopped'
        r["provenance"]["space_name"] = "<img src=x onerror=alert(2)>"
        print(json.dumps(r))
PY
    "$FASWEEP" import evil.jsonl --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o r.html
    expect_status 0
    local page
    page=$(cat r.html)
    expect_not_in "$page" "<script>alert(1)"
    expect_not_in "$page" "<img src=x"
    expect_not_in "$page" "<b>no</b>"
    expect_in "$page" "&lt;script&gt;alert(1)&lt;/script&gt;"
    expect_in "$page" "&lt;img src=x onerror=alert(2)&gt;"
    expect_in "$page" "&quot;&lt;b&gt;no&lt;/b&gt;&quot; &amp; stopped"
    run python3 "$CHECK" r.html
    expect_status 0
}

@test "report: any store: only failures, only baselines, several devices, a single record" {
    grep '"status":"ok"' "$FIX/results.jsonl" | grep '"kind":"kernel"' | head -1 >one.jsonl
    grep -v '"status":"ok"' "$FIX/results.jsonl" | grep '"kind":"kernel"' >fail.jsonl
    grep '"kind":"baseline"' "$FIX/results.jsonl" >base.jsonl
    for f in one fail base; do
        "$FASWEEP" import $f.jsonl --store $f.lmdb >/dev/null
        run --separate-stderr "$FASWEEP" report --store $f.lmdb --space "$REPO/spaces/l4.json" -o $f.html
        expect_status 0
        run python3 "$CHECK" $f.html
        expect_status 0
    done
    expect_in "$(cat one.html)" "; 1 group (device"
    expect_in "$(cat fail.html)" "No ok kernel record in this group."
    expect_in "$(cat base.html)" "No kernel records in this group: no heatmap."
    expect_in "$(cat base.html)" "sdpa-flash"
    # several devices, filtered to one
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" report --store "$STORE" --gpu "NVIDIA L4" --mode hot -o l4.html
    expect_status 0
    expect_in "$stderr" "(2 groups)"
    # each group says what its mode times, from the mode table (store/mode.h)
    expect_in "$(cat l4.html)" '<p class="mode"><b>hot</b>: L2 warm (inputs reused launch after launch); one launch per event pair; noise: relative standard error of the median'
}

@test "report: bad input: no match, missing store, bad space, unwritable -o; nothing half-written" {
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" report --store "$STORE" --gpu "no such GPU" -o r.html
    expect_status 1
    expect_in "$stderr" "match the filter"
    [ ! -e r.html ] || flunk "a page was written"
    run --separate-stderr "$FASWEEP" report --store "$WORK/none.lmdb" -o r.html
    expect_status 1
    echo '{' >bad.json
    run --separate-stderr "$FASWEEP" report --store "$STORE" --space bad.json -o r.html
    expect_status 2
    run --separate-stderr "$FASWEEP" report --store "$STORE" -o "$WORK/no/such/dir/r.html"
    expect_status 1
    expect_in "$stderr" "cannot create"
    run --separate-stderr "$FASWEEP" report --store "$STORE" -k 0
    expect_status 2
    [ -z "$(ls "$WORK" | grep -v -e '\.lmdb$' -e '^bad.json$')" ] || flunk "left: $(ls "$WORK")"
}

# The colours of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium
# writes): prints "DISTINCT NONBACKGROUND_FRACTION".
png_colours() {
    python3 - "$1" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(d):
    n, t = struct.unpack(">I4s", d[pos:pos + 8])
    body = d[pos + 8:pos + 8 + n]
    if t == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif t == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
bpp = 3 if ctype == 2 else 4
raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = [0, a, b, (a + b) // 2, a if pa <= pb and pa <= pc else b if pb <= pc else c][f]
        line[i] = (line[i] + pred) & 0xFF
    rows.append(bytes(line))
    prev = line
colours, bg = {}, 0
for r in rows:
    for x in range(0, stride, bpp):
        px = r[x:x + 3]
        colours[px] = colours.get(px, 0) + 1
top = max(colours.values())
print(len(colours), round(1 - top / (w * h), 3))
PY
}

@test "report in a real browser: Chromium's DOM has the SVG cells, its screenshot is not blank" {
    local chrome
    chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
    if [ -z "$chrome" ]; then
        skip "no Chromium on this machine (Debian's chromium package; scripts/deps.sh test installs it)"
    fi
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    "$FASWEEP" report --store "$STORE" --space "$REPO/spaces/l4.json" -o r.html >/dev/null
    local flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
        --user-data-dir="$WORK/chrome")
    timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$WORK/r.html" >dom.html 2>chrome.err ||
        { cat chrome.err; flunk "chromium --dump-dom failed"; }
    local cells
    cells=$(grep -o '<rect class="cell ' dom.html | wc -l)
    # 162 + 162 (the L4 space, hot and cold) + 32 + 2 + 2 (records' own axes)
    [ "$cells" -eq 360 ] || flunk "the browser's DOM has $cells heatmap cells, expected 360"
    timeout 120 "$chrome" "${flags[@]}" --window-size=1200,1600 --screenshot="$WORK/r.png" \
        "file://$WORK/r.html" >/dev/null 2>chrome.err ||
        { cat chrome.err; flunk "chromium --screenshot failed"; }
    read -r n frac < <(png_colours r.png)
    echo "screenshot: $n distinct colours, $frac of the pixels not background"
    [ "$n" -ge 32 ] || flunk "only $n distinct colours: a blank or broken page"
    python3 -c "import sys; sys.exit(0 if float('$frac') > 0.05 else 1)" ||
        flunk "only $frac of the screenshot is not background"
}

@test "report: a tie is drawn only when the rule says so; without intervals it is unknown, never a tie" {
    # the fixture's records have no interval: no bar is a tie, each says so
    "$FASWEEP" import "$FIX/results.jsonl" --store "$STORE" >/dev/null
    run --separate-stderr "$FASWEEP" report --store "$STORE" --gpu "NVIDIA L4" \
        --problem 4,8,512,64 --mode hot -o plain.html
    expect_status 0
    expect_not_in "$(cat plain.html)" 'class="bar tie"'
    # ranks 2 to 5 each say so (rank 5, 290 us, too: never drawn beside 148 us as a tie)
    [ "$(grep -o '&#183; tie unknown' plain.html | wc -l)" -eq 4 ] || flunk "not 4 unknown ties"
    # with intervals (+-2 %): rank 2 (152.1 us) ties with 148.3, rank 3 (158.4) does not
    python3 - "$FIX/results.jsonl" >ci.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = r.get("time") or {}
    if r["status"] == "ok" and t.get("median_us"):
        t["ci_lo_us"], t["ci_hi_us"] = t["median_us"] * 0.98, t["median_us"] * 1.02
    print(json.dumps(r))
PY
    "$FASWEEP" import ci.jsonl --store ci.lmdb >/dev/null || flunk "import failed"
    run --separate-stderr "$FASWEEP" report --store ci.lmdb --gpu "NVIDIA L4" \
        --problem 4,8,512,64 --mode hot -o ci.html
    expect_status 0
    [ "$(grep -o 'class="bar tie"' ci.html | wc -l)" -eq 1 ] || flunk "not one tie bar"
    expect_not_in "$(cat ci.html)" "&#183; tie unknown"
    run --separate-stderr "$FASWEEP" topk -k 3 --no-seeds --gpu "NVIDIA L4" \
        --problem 4,8,512,64 --mode hot --store ci.lmdb
    expect_status 0
    expect_in "$output" "152.10    2.00     yes"
    expect_in "$output" "158.40    2.00      no"
}
