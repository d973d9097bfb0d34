package trace

import (
	"bytes"
	"math"
	"testing"
	"time"
)

// benchTrace is a 10,000-point trace sampled every second.
func benchTrace() *Trace {
	t := &Trace{UID: "000", Name: "bench"}
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	for i := 0; i < 10000; i++ {
		f := float64(i)
		t.Points = append(t.Points, Point{Time: t0.Add(time.Duration(i) * time.Second),
			Lat: 39.930702 + 1e-5*math.Sin(f/100), Lon: 116.376417 + 1e-5*f/7, Alt: 149.9616 + float64(i%50)})
	}
	return t
}

func benchmarkRead(b *testing.B, f Format) {
	data := writeAll(b, f, []*Trace{benchTrace()})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		r, _ := NewReader(bytes.NewReader(data), f, ReadOptions{})
		if _, err := ReadAll(r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "points/s")
}

func benchmarkWrite(b *testing.B, f Format) {
	tr := benchTrace()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		w, _ := NewWriter(&buf, f)
		if err := w.Write(tr); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "points/s")
}

func BenchmarkReadPLT(b *testing.B)      { benchmarkRead(b, PLT) }
func BenchmarkReadCSV(b *testing.B)      { benchmarkRead(b, CSV) }
func BenchmarkReadGeoJSON(b *testing.B)  { benchmarkRead(b, GeoJSON) }
func BenchmarkReadGPX(b *testing.B)      { benchmarkRead(b, GPX) }
func BenchmarkWritePLT(b *testing.B)     { benchmarkWrite(b, PLT) }
func BenchmarkWriteCSV(b *testing.B)     { benchmarkWrite(b, CSV) }
func BenchmarkWriteGeoJSON(b *testing.B) { benchmarkWrite(b, GeoJSON) }
func BenchmarkWriteGPX(b *testing.B)     { benchmarkWrite(b, GPX) }

func BenchmarkResample(b *testing.B) {
	tr := benchTrace()
	for b.Loop() {
		if _, err := tr.Resample(500 * time.Millisecond); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSummarize(b *testing.B) {
	tr := benchTrace()
	for b.Loop() {
		Summarize(tr)
	}
}
