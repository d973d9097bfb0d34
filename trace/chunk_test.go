package trace

import (
	"strings"
	"testing"
)

// A CSV run longer than Chunk comes back in consecutive traces of one uid,
// and the policy's checks hold across the splits: a repeat of the last row
// of a chunk is merged, a row going back in time is skipped.
func TestCSVChunk(t *testing.T) {
	rows := []string{"uid,time,lat,lon",
		"a,2008-10-24T02:00:00Z,39.90,116.30",
		"a,2008-10-24T02:00:01Z,39.90,116.31",
		"a,2008-10-24T02:00:02Z,39.90,116.32",
		"a,2008-10-24T02:00:02Z,39.90,116.32", // repeat of a chunk's last row
		"a,2008-10-24T02:00:01Z,39.90,116.33", // backwards, right after a split
		"a,2008-10-24T02:00:03Z,39.90,116.34",
		"a,2008-10-24T02:00:04Z,39.90,116.35",
		"b,2008-10-24T02:00:00Z,39.91,116.30",
	}
	r, err := NewReader(strings.NewReader(strings.Join(rows, "\n")+"\n"), CSV, ReadOptions{Chunk: 3})
	if err != nil {
		t.Fatal(err)
	}
	traces, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range traces {
		got = append(got, tr.UID+":"+strings.Repeat("x", tr.Len()))
	}
	if want := "a:xxx a:xx b:x"; strings.Join(got, " ") != want {
		t.Errorf("chunks %q, want %q", strings.Join(got, " "), want)
	}
	rep := r.Report()
	if by := rep.ByReason(); by[ReasonDuplicate] != 1 || by[ReasonTimeBackward] != 1 || rep.SkippedRows() != 2 {
		t.Errorf("report %v", by)
	}
}
