package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geolifeExcerpt is the start of GeoLife user 000's 20081023025304.plt.
const geolifeExcerpt = "Geolife trajectory\r\nWGS 84\r\nAltitude is in Feet\r\nReserved 3\r\n0,2,255,My Track,0,0,2,8421376\r\n0\r\n" +
	"39.984702,116.318417,0,492,39744.1201851852,2008-10-23,02:53:04\r\n" +
	"39.984683,116.31845,0,492,39744.1202546296,2008-10-23,02:53:10\r\n" +
	"39.984686,116.318417,0,492,39744.1203125,2008-10-23,02:53:15\r\n"

// run executes tracepriv with args and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCmd(&stdout, &stderr)
	root.SetArgs(args)
	err := root.Execute()
	return stdout.String(), stderr.String(), err
}

func TestConvertInspect(t *testing.T) {
	dir := t.TempDir()
	plt := filepath.Join(dir, "000", "20081023025304.plt")
	os.MkdirAll(filepath.Dir(plt), 0o755)
	if err := os.WriteFile(plt, []byte(geolifeExcerpt), 0o644); err != nil {
		t.Fatal(err)
	}
	// PLT -> GeoJSON -> GPX -> CSV -> PLT gives back the same bytes.
	prev := plt
	for _, ext := range []string{".geojson", ".gpx", ".csv", ".plt"} {
		next := filepath.Join(dir, "x"+ext)
		stdout, _, err := run(t, "convert", "--in", prev, "--out", next, "--json")
		if err != nil {
			t.Fatalf("convert %s -> %s: %v", prev, next, err)
		}
		var res convertResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
		}
		if res.Traces != 1 || res.Points != 3 || res.Out != next {
			t.Errorf("result %+v", res)
		}
		prev = next
	}
	got, _ := os.ReadFile(prev)
	if string(got) != geolifeExcerpt {
		t.Errorf("round trip changed the file:\n%s", got)
	}

	stdout, _, err := run(t, "inspect", filepath.Join(dir, "x.csv"), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res inspectResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
	}
	if len(res.Traces) != 1 || res.Traces[0].UID != "000" || res.Traces[0].Points != 3 || !res.Traces[0].Valid || res.Traces[0].DurationS != 11 {
		t.Errorf("inspect: %+v", res)
	}
	stdout, _, err = run(t, "inspect", plt)
	if err != nil || !strings.Contains(stdout, "000") || !strings.Contains(stdout, "20081023025304") {
		t.Errorf("inspect text: %v\n%s", err, stdout)
	}
}

func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("uid,time,lat,lon\na,1224730384,39.9,116.3\na,1224730385,39.9x,116.3\na,1224730386,39.9,116.3\n"), 0o644)
	out := filepath.Join(dir, "out.gpx")
	for _, args := range [][]string{{"convert", "--in", bad, "--out", out}, {"inspect", bad}} {
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), bad+":3:") || !strings.Contains(err.Error(), `field "lat"`) {
			t.Errorf("%s: error %v, want one naming %s:3 and field lat", args[0], err, bad)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed conversion left an output file")
	}
	// Leniently, the bad row is skipped and reported.
	stdout, _, err := run(t, "convert", "--in", bad, "--out", out, "--lenient", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res convertResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Points != 2 || res.Report.Skipped != 1 || len(res.Report.Problems) != 1 || res.Report.Problems[0].Line != 3 {
		t.Errorf("lenient result %+v", res.Report)
	}
	stdout, _, err = run(t, "convert", "--in", bad, "--out", out, "--lenient")
	if err != nil || !strings.Contains(stdout, "skipped 1 malformed records") || !strings.Contains(stdout, bad+":3:") {
		t.Errorf("lenient text: %v\n%s", err, stdout)
	}
	// Truncated and unknown inputs fail cleanly.
	trunc := filepath.Join(dir, "t.gpx")
	os.WriteFile(trunc, []byte("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\">\n"), 0o644)
	if _, _, err := run(t, "inspect", trunc); err == nil || !strings.Contains(err.Error(), trunc+":2: truncated") {
		t.Errorf("truncated GPX: %v", err)
	}
	if _, _, err := run(t, "convert", "--in", bad); err == nil {
		t.Error("convert without --out succeeded")
	}
	if _, _, err := run(t, "convert", "--in", bad, "--out", filepath.Join(dir, "x.kml")); err == nil {
		t.Error("convert to .kml succeeded")
	}
	if _, _, err := run(t, "inspect", bad, "--tz", "Mars/Olympus"); err == nil {
		t.Error("unknown time zone accepted")
	}
}
