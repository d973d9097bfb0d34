package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// GeoLife PLT constants.
const (
	pltHeaderLines = 6
	pltUnknownAlt  = -777 // altitude meaning "invalid"
	feet           = 0.3048
)

// pltHeader is the header GeoLife writes.
var pltHeader = []string{
	"Geolife trajectory",
	"WGS 84",
	"Altitude is in Feet",
	"Reserved 3",
	"0,2,255,My Track,0,0,2,8421376",
	"0",
}

// pltLayout describes a PLT file in errors that refuse one.
const pltLayout = `a PLT file is 6 header lines ("Geolife trajectory" or "OziExplorer Track Point File Version 2.1", "WGS 84", ` +
	`"Altitude is in Feet", "Reserved 3", the track's settings, a point count) and then one fix per line, ` +
	`7 comma-separated fields: lat,lon,0,altitude_feet,days,date,time`

// checkPLTHeader checks header line n (1-based) of a PLT file. PLT is
// OziExplorer's track format, which GeoLife writes with its own first
// line: the lines a reader relies on are checked (the datum, since
// coordinates are read as WGS 84, and the altitude unit), and the fixed
// ones, so that a file that is not PLT is refused rather than read as an
// empty trace. Line 5 (the track's settings, with a free-text description)
// is not read.
func checkPLTHeader(n int, line string) error {
	norm := strings.ToLower(strings.Join(strings.Fields(line), " "))
	var ok bool
	var want string
	switch n {
	case 1:
		ok = norm == "geolife trajectory" || strings.HasPrefix(norm, "oziexplorer track point file")
		want = `"Geolife trajectory" or "OziExplorer Track Point File Version 2.1"`
	case 2:
		ok = strings.ReplaceAll(norm, " ", "") == "wgs84"
		if !ok && norm != "" && isText(line) && !strings.Contains(line, ",") {
			// Another datum would misplace every fix.
			return fmt.Errorf("%w datum %s: tracepriv reads WGS 84 coordinates only (convert the file to WGS 84 first)", ErrUnsupported, infile.Excerpt([]byte(strings.TrimSpace(line))))
		}
		want = `the datum "WGS 84"`
	case 3:
		ok = norm == "altitude is in feet"
		want = `"Altitude is in Feet"`
	case 4:
		ok = strings.HasPrefix(norm, "reserved")
		want = `"Reserved 3"`
	case 5:
		return nil
	case 6:
		_, err := strconv.ParseUint(strings.TrimSpace(line), 10, 64)
		ok = err == nil
		want = "a point count (GeoLife writes 0)"
	}
	if ok {
		return nil
	}
	got := fmt.Sprintf("%q", line)
	if !isText(line) {
		got = "binary data"
	} else if len(line) > 60 {
		got = fmt.Sprintf("%q...", line[:60])
	}
	return fmt.Errorf("%w: found %s where line %d of PLT's header is %s; %s", ErrNotPLT, got, n, want, pltLayout)
}

// isText reports whether s is UTF-8 text without control characters
// other than tab.
func isText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

// pltFields names the columns in errors.
var pltFields = []string{"lat", "lon", "zero", "alt_feet", "days", "date", "time"}

type pltReader struct {
	b    *builder
	s    *lineScanner
	done bool
}

func newPLTReader(r io.Reader, b *builder) *pltReader {
	return &pltReader{b: b, s: newLineScanner(r)}
}

func (r *pltReader) Report() *Report { return r.b.rep }

// Next returns the file's single trace, then io.EOF.
func (r *pltReader) Next() (*Trace, error) {
	if r.done {
		return nil, io.EOF
	}
	r.done = true
	for i := 0; i < pltHeaderLines; i++ {
		line, ok, err := r.s.next()
		if err != nil {
			if errors.Is(err, ErrMalformed) { // a line too long: binary data
				err = fmt.Errorf("%w: line %d is not a line of text (%v); %s", ErrNotPLT, r.s.line+1, err, pltLayout)
			}
			return nil, r.b.fail(r.s.line+1, "", "", err)
		}
		if !ok {
			if i == 0 {
				return nil, r.b.fail(0, "", "", fmt.Errorf("%w: the file is empty; %s", ErrNotPLT, pltLayout))
			}
			return nil, r.b.fail(r.s.line, "", "",
				fmt.Errorf("%w: PLT header has %d of %d lines; %s", ErrTruncated, i, pltHeaderLines, pltLayout))
		}
		if err := checkPLTHeader(i+1, strings.TrimPrefix(line, "\ufeff")); err != nil {
			if r.s.unterminated && i > 0 {
				err = fmt.Errorf("%w: the file ends in line %d of the PLT header, without a line end; %s", ErrTruncated, i+1, pltLayout)
			}
			return nil, r.b.fail(r.s.line, "", "", err)
		}
	}
	t := &Trace{UID: r.b.opt.UID}
	rows := 0
	for {
		line, ok, err := r.s.next()
		if err != nil {
			return nil, r.b.fail(r.s.line+1, "", "", err)
		}
		if !ok {
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		rows++
		p, raw, perr := r.parse(line)
		if r.s.unterminated {
			// A cut last row may still parse, with a cut number.
			perr = r.b.cut(r.s.line, perr)
		}
		if perr != nil {
			if err := r.b.bad(perr, 1); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.b.add(t, p, r.s.line, raw); err != nil {
			return nil, err
		}
	}
	if rows == 0 {
		// A PLT file is one trace: without a fix it is none.
		return nil, r.b.fail(r.s.line, "", "", fmt.Errorf("%w: the PLT header is followed by no fix; %s", ErrNoFix, pltLayout))
	}
	return r.b.emit(t), nil
}

// parse reads lat,lon,0,alt_feet,days,date,time. The time comes from the
// date and time columns in the reader's location and is cross-checked
// against the day number (days since 1899-12-30), which also supplies
// milliseconds the time column cannot hold; without date and time the day
// number alone is used.
func (r *pltReader) parse(line string) (Point, string, *ParseError) {
	n := r.s.line
	f := strings.Split(line, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	if len(f) < len(pltFields) {
		return Point{}, "", r.b.fail(n, pltFields[len(f)], "",
			fmt.Errorf("%w (row has %d of %d fields)", ErrMissing, len(f), len(pltFields)))
	}
	if len(f) > len(pltFields) {
		return Point{}, "", r.b.fail(n, "", "",
			fmt.Errorf("%w: row has %d fields, want %d", ErrMalformed, len(f), len(pltFields)))
	}
	var p Point
	var err error
	if p.Lat, err = parseCoord(f[0], 90); err != nil {
		return Point{}, "", r.b.failCoord(n, "lat", f[0], err)
	}
	if p.Lon, err = parseCoord(f[1], 180); err != nil {
		return Point{}, "", r.b.failCoord(n, "lon", f[1], err)
	}
	alt, err := parseAlt(f[3])
	if err != nil {
		return Point{}, "", r.b.fail(n, "alt_feet", f[3], err)
	}
	if alt == pltUnknownAlt {
		alt = math.NaN()
	}
	p.Alt = alt * feet

	loc := r.b.opt.loc()
	var dayTime time.Time
	hasDays := f[4] != ""
	if hasDays {
		d, err := parseNumber(f[4])
		if err == nil {
			dayTime, err = fromDays(d, loc)
		}
		if err != nil {
			return Point{}, "", r.b.fail(n, "days", f[4], err)
		}
	}
	raw := f[5] + " " + f[6]
	switch {
	case f[5] == "" && f[6] == "":
		if !hasDays {
			return Point{}, "", r.b.fail(n, "date", "", fmt.Errorf("%w (and so are time and days)", ErrMissing))
		}
		// 10 decimals of a day resolve ~9 µs: keep milliseconds.
		p.Time, raw = dayTime.Round(time.Millisecond), f[4]
		return p, raw, nil
	case f[5] == "":
		return Point{}, "", r.b.fail(n, "date", "", ErrMissing)
	case f[6] == "":
		return Point{}, "", r.b.fail(n, "time", "", ErrMissing)
	}
	if p.Time, err = time.ParseInLocation("2006-01-02 15:04:05", raw, loc); err == nil {
		if err = checkYear(p.Time); err != nil {
			return Point{}, "", r.b.fail(n, "date", f[5], err)
		}
	} else {
		field, val := "date", f[5]
		if _, derr := time.Parse("2006-01-02", f[5]); derr == nil {
			field, val = "time", f[6]
		}
		return Point{}, "", r.b.fail(n, field, val, ErrBadTime)
	}
	if hasDays {
		diff := dayTime.Sub(p.Time)
		if diff < -time.Second || diff > time.Second {
			return Point{}, "", r.b.fail(n, "days", f[4], fmt.Errorf("%w date and time %q by %v", ErrInconsistent, raw, diff))
		}
		// Our writer floors the time column to the second and keeps the
		// fraction in the day number, whose 10 decimals resolve ~9 µs.
		if p.Time.Nanosecond() == 0 && diff > 0 {
			p.Time = p.Time.Add(diff.Round(time.Millisecond))
		}
	}
	return p, raw, nil
}

// pltEpoch is day 0 of the PLT day number (the spreadsheet epoch).
var pltEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// fromDays converts a day number to wall-clock time in loc.
func fromDays(d float64, loc *time.Location) (time.Time, error) {
	// Day -693593 is 0001-01-01 and day 2958466 is 10000-01-01.
	if !(d >= -693593 && d < 2958466) {
		return time.Time{}, fmt.Errorf("%w [-693593, 2958466) (years 0001 to 9999)", ErrOutOfRange)
	}
	whole := math.Floor(d)
	ns := math.Round((d - whole) * 86400e9)
	t := time.Date(1899, 12, 30+int(whole), 0, 0, 0, int(ns), loc)
	return t, checkYear(t)
}

// toDays converts t's wall clock in its own location to a day number.
func toDays(t time.Time) float64 {
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	s := wall.Unix() - pltEpoch.Unix()
	return float64(s)/86400 + float64(wall.Nanosecond())/86400e9
}

// pltWriter writes one trace in GeoLife's layout, CRLF line ends, times in
// UTC.
type pltWriter struct {
	w       io.Writer
	written bool
	buf     []byte
}

func (w *pltWriter) Write(t *Trace) error {
	if w.written {
		return fmt.Errorf("PLT holds one trace per file; write each trace to its own file")
	}
	w.written = true
	for _, h := range pltHeader {
		if _, err := io.WriteString(w.w, h+"\r\n"); err != nil {
			return err
		}
	}
	for _, p := range t.Points {
		tu := p.Time.UTC()
		b := w.buf[:0]
		b = strconv.AppendFloat(b, p.Lat, 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, p.Lon, 'f', -1, 64)
		b = append(b, ",0,"...)
		if math.IsNaN(p.Alt) {
			b = strconv.AppendInt(b, pltUnknownAlt, 10)
		} else {
			// Round to 1e-6 ft (0.3 µm) so 492 ft survives ft->m->ft.
			b = strconv.AppendFloat(b, math.Round(p.Alt/feet*1e6)/1e6, 'f', -1, 64)
		}
		b = append(b, ',')
		b = appendDays(b, toDays(tu))
		b = append(b, ',')
		b = tu.AppendFormat(b, "2006-01-02,15:04:05")
		b = append(b, '\r', '\n')
		w.buf = b
		if _, err := w.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// appendDays writes a day number with GeoLife's 10 decimals, trailing zeros
// trimmed.
func appendDays(b []byte, d float64) []byte {
	s := strconv.FormatFloat(d, 'f', 10, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	return append(b, s...)
}

func (w *pltWriter) Close() error {
	if !w.written {
		return fmt.Errorf("PLT needs a trace to write")
	}
	return nil
}
