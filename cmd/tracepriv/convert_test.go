package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/trace"
)

// geolifeExcerpt is three fixes in GeoLife's PLT layout (made-up
// positions, no GeoLife data).
const geolifeExcerpt = "Geolife trajectory\r\nWGS 84\r\nAltitude is in Feet\r\nReserved 3\r\n0,2,255,My Track,0,0,2,8421376\r\n0\r\n" +
	"39.930702,116.376417,0,492,39744.1201851852,2008-10-23,02:53:04\r\n" +
	"39.930683,116.37645,0,492,39744.1202546296,2008-10-23,02:53:10\r\n" +
	"39.930686,116.376417,0,492,39744.1203125,2008-10-23,02:53:15\r\n"

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
	var res trace.Inspection
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
	// Strictly, the bad row stops the command, with an error naming file,
	// line and field and saying how to go on.
	for _, args := range [][]string{{"convert", "--in", bad, "--out", out, "--strict"}, {"inspect", bad, "--strict"}} {
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), bad+":3:") || !strings.Contains(err.Error(), `field "lat"`) ||
			!strings.Contains(err.Error(), "without it, rows like this one are skipped and reported") {
			t.Errorf("%s: error %v, want one naming %s:3 and field lat, and the way on", args[0], err, bad)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed conversion left an output file")
	}
	// By default (and with --lenient, a no-op), the bad row is skipped and
	// reported on stderr and in --json.
	for _, extra := range [][]string{nil, {"--lenient"}} {
		stdout, stderr, err := run(t, append([]string{"convert", "--in", bad, "--out", out, "--json", "--force"}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		var res convertResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		if res.Points != 2 || res.SkippedRows != 1 || res.SkippedByReason[trace.ReasonMalformed] != 1 || res.Report.Skipped != 1 ||
			len(res.Report.Problems) != 1 || res.Report.Problems[0].Line != 3 {
			t.Errorf("%v: result %+v, report %+v", extra, res, res.Report)
		}
		var raw map[string]any
		json.Unmarshal([]byte(stdout), &raw)
		if raw["skipped_rows"] != 1.0 {
			t.Errorf("--json has skipped_rows %v", raw["skipped_rows"])
		}
		if !strings.Contains(stderr, "1 of 3 rows skipped") || !strings.Contains(stderr, "1 malformed_row") || !strings.Contains(stderr, bad+":3") {
			t.Errorf("%v: stderr\n%s", extra, stderr)
		}
	}
	if _, _, err := run(t, "convert", "--in", bad, "--out", out, "--lenient", "--strict"); err == nil {
		t.Error("--lenient with --strict accepted")
	}
	// --quiet silences the report, not the counts.
	if _, stderr, err := run(t, "convert", "--in", bad, "--out", out, "--quiet", "--force"); err != nil || stderr != "" {
		t.Errorf("--quiet: %v, stderr %q", err, stderr)
	}
	// A GPX document cut short: strictly an error; by default the fixes
	// before the cut are kept and the cut reported.
	trunc := filepath.Join(dir, "t.gpx")
	os.WriteFile(trunc, []byte("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2008-10-23T02:53:04Z</time></trkpt>\n<trkpt lat=\"1\" lon=\"2\">\n"), 0o644)
	if _, _, err := run(t, "inspect", trunc, "--strict"); err == nil || !strings.Contains(err.Error(), trunc+":3: truncated") {
		t.Errorf("truncated GPX: %v", err)
	}
	if stdout, stderr, err := run(t, "inspect", trunc); err != nil || !strings.Contains(stdout, "1 points") || !strings.Contains(stderr, "1 truncated_row") {
		t.Errorf("truncated GPX, lenient: %v\n%s\n%s", err, stdout, stderr)
	}
	// Bad names and values name the flag or file and the fix.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "--in", bad}, "--in and --out are required"},
		{[]string{"convert", "--in", bad, "--out", filepath.Join(dir, "x.kml")}, `--out: ` + filepath.Join(dir, "x.kml") + `: unknown trace format ".kml"`},
		{[]string{"convert", "--in", bad, "--out", out, "--to", "kml"}, `--to: unknown trace format "kml"`},
		{[]string{"convert", "--in", filepath.Join(dir, "missing.csv"), "--out", filepath.Join(dir, "new.gpx")}, "missing.csv: no such file (check the path)"},
		{[]string{"inspect", bad, "--tz", "Mars/Olympus"}, `--tz "Mars/Olympus": not an IANA time zone`},
		{[]string{"inspect", bad, "--from", "kml"}, `--from: unknown trace format "kml"`},
		{[]string{"inspect", bad, "--max-speed", "0"}, "--max-speed 0: want a speed in km/h above 0"},
		{[]string{"inspect", bad, "--max-gap", "-1s"}, "--max-gap -1s: want a positive duration"},
		{[]string{"inspect", filepath.Join(dir, "notes")}, "no such file"},
		{[]string{"convert", "--in", bad, "--out", filepath.Join(dir, "one.plt"), "--split-gaps", "--max-gap", "1s"}, "a PLT file holds one trace and there are 2"},
	} {
		_, _, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	noext := filepath.Join(dir, "export")
	os.WriteFile(noext, []byte("uid,time,lat,lon\na,1224730384,39.9,116.3\n"), 0o644)
	if _, _, err := run(t, "inspect", noext); err == nil || !strings.Contains(err.Error(), "no file extension") || !strings.Contains(err.Error(), "--from") {
		t.Errorf("no extension: %v", err)
	}
	if _, _, err := run(t, "inspect", noext, "--from", "csv"); err != nil {
		t.Errorf("--from csv: %v", err)
	}
}

// TestConvertDirectoryAndFilters converts a directory of PLT files into one
// CSV, with the plausibility filters.
func TestConvertDirectoryAndFilters(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "000")
	os.MkdirAll(user, 0o755)
	// The excerpt, and a copy 20 minutes later with a fix that jumps 11 km
	// and a repeated position.
	os.WriteFile(filepath.Join(user, "a.plt"), []byte(geolifeExcerpt), 0o644)
	later := geolifeExcerpt[:strings.Index(geolifeExcerpt, "39.93")] +
		"39.930702,116.376417,0,492,,2008-10-23,03:13:04\r\n" +
		"40.030683,116.37645,0,492,,2008-10-23,03:13:10\r\n" +
		"39.930686,116.376417,0,492,,2008-10-23,03:13:15\r\n" +
		"39.930686,116.376417,0,492,,2008-10-23,03:33:15\r\n"
	os.WriteFile(filepath.Join(user, "b.plt"), []byte(later), 0o644)
	out := filepath.Join(dir, "all.geojson")
	stdout, _, err := run(t, "convert", "--in", user, "--out", out, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res convertResult
	json.Unmarshal([]byte(stdout), &res)
	if res.Traces != 2 || res.Points != 7 || res.From != trace.PLT || res.Filters != nil {
		t.Errorf("directory: %+v", res)
	}
	stdout, _, err = run(t, "inspect", out, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ins trace.Inspection
	json.Unmarshal([]byte(stdout), &ins)
	if len(ins.Traces) != 2 || !ins.Traces[0].Plausible || ins.Traces[1].Plausible || ins.Traces[1].Plausibility.SpeedJumps != 2 ||
		!ins.Traces[1].Valid || ins.Limits.MaxSpeed != trace.DefaultMaxSpeed {
		t.Errorf("inspect: %+v", ins)
	}
	stdout, _, err = run(t, "inspect", out)
	if err != nil || !strings.Contains(stdout, "speed jump > 300 km/h") || !strings.Contains(stdout, "is implausible: 2 speed jumps over 300 km/h") {
		t.Errorf("inspect text: %v\n%s", err, stdout)
	}
	stdout, _, err = run(t, "convert", "--in", user, "--out", out, "--drop-speed-jumps", "--split-gaps", "--json", "--force")
	if err != nil {
		t.Fatal(err)
	}
	res = convertResult{}
	json.Unmarshal([]byte(stdout), &res)
	if f := res.Filters; f == nil || f.SpeedJumpsDropped != 1 || f.GapSplits != 1 || res.Traces != 3 || res.Points != 6 {
		t.Errorf("filters: %+v %+v", res, res.Filters)
	}
	stdout, _, err = run(t, "inspect", out, "--json")
	if err != nil {
		t.Fatal(err)
	}
	ins = trace.Inspection{}
	json.Unmarshal([]byte(stdout), &ins)
	for _, tr := range ins.Traces {
		if !tr.Plausible {
			t.Errorf("after filtering, %s is implausible: %v", tr.Name, tr.Plausibility)
		}
	}
}
