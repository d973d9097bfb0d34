// Package trace is the location-trace model of tracepriv: timestamped WGS84
// points of one user, their validation and cleaning, and streaming readers
// and writers for GeoLife PLT, CSV, GeoJSON and GPX 1.1.
//
// For example, converting a GeoLife file to GeoJSON:
//
//	traces, report, err := trace.ReadFile("geolife/000/20081023025304.plt", trace.ReadOptions{}) // format by extension
//	if err != nil {
//		return err
//	}
//	fmt.Println(report.SkippedRows(), "rows skipped") // each reason counted, the first ones with file, line and field
//	for _, t := range traces {
//		fmt.Println(t.UID, t.Len(), t.Duration()) // the person from the folder: 000
//	}
//	return trace.WriteFile("000.geojson", traces, trace.GeoJSON) // atomically
//
// Timestamps are treated as public throughout tracepriv: mechanisms keep
// them and design their noise from them, never from the coordinates.
//
// # Reading and writing
//
// NewReader returns a Reader in the shape of encoding/csv: Next yields one
// trace at a time and io.EOF at the end. PLT and CSV are read line by line
// and GPX token by token with encoding/xml, so memory stays bounded by the
// largest trace; GeoJSON is decoded as a whole document (with
// encoding/json's tokenizer, keeping byte offsets so errors still name a
// line). ReadFile and WriteFile wrap them for files; WriteFile replaces its
// target atomically.
//
// # Dirty input
//
// Real GPS files are dirty: GeoLife repeats timestamps, loggers die in the
// middle of a row, exports carry NaN. Every reader applies one policy, by
// default lenient, so that real data reads out of the box and nothing is
// dropped unaccounted for:
//
//   - an exact repeat of the previous fix (same time, position, altitude
//     and attributes) is merged into it;
//   - a row at the previous fix's time but elsewhere, a row earlier than
//     the previous fix, a latitude or longitude out of range or not finite,
//     a field that does not parse, a missing or extra field, and a last row
//     without a line end (a file cut mid-row, where a cut number would
//     still parse) are skipped; the fix kept at a repeated time is the
//     first one, and nothing is averaged;
//   - a GPX document cut short keeps the fixes before the cut.
//
// Every row skipped or merged is counted in the Report by Reason, and the
// first MaxProblems of each reason are kept as a *ParseError naming the
// file, line, field and offending text, e.g. `data/x.plt:12: field "lat":
// "39.9x" is not a number`. Report.SkippedRows is the total. With
// ReadOptions.Strict the first row that would be skipped is returned as
// that error instead (exact repeats are merged in both modes). A file that
// cannot be read at all (no PLT header, broken JSON, no GPX root) is an
// error in both modes, and so is a file whose every row was skipped
// (ErrNoFix): it holds no trace and most likely is not of its format.
// ReadFiles, for a corpus, skips such files in lenient mode and lists them
// in Report.SkippedFiles, so one bad file does not stop a run. The user
// documentation is docs/input.md.
//
// # People, names and free text
//
// Who a person is follows one rule, PersonRule, in every command and
// package: an input (a file or a directory) is one person unless it is
// declared a corpus, in which case each immediate child folder, or each
// uid of a file's uid field, is one person; folders below a person never
// make a person, and ambiguity merges (Report.Merged), so persons of a
// corpus that hold the same uid are one (JoinPersons). ReadPaths applies
// it all; ReadFile with ReadOptions.Root applies it to one file, without
// the joins, which need every file. ReadFile alone reads a file's
// data: a trace without a user id there is the person of the file's
// GeoLife user folder or folder (UserDir), and a file with no folder to
// name the person (one in the current directory) is the person named
// after the file (FileUID), and
// Report.UIDFromFile says so. Free-text metadata is never read: GPX
// names, descriptions, comments, authors, links and keywords, PLT's track
// description and a GeoJSON line feature's properties other than the uid
// and the per-position times, altitudes and attributes are skipped, and
// the writers write no name, so that a person's name in a file's metadata
// cannot reach a release. Trace.Name is the file's name. Point attributes
// (GPX extensions, extra CSV columns, GeoJSON "attrs" and Point features'
// properties) are carried by conversions; releases (packages sanitize and
// geoind) write positions and times only.
//
// Files follows symbolic links, to directories and files, as if what a
// link points to were where the link is, so that a directory of links to
// people's folders is a corpus of those people; a cycle of links, or one
// file reached twice, is an error.
//
// # Plausibility
//
// A trace that reads cleanly may still not be what a receiver recorded.
// Check counts speed jumps (steps faster than Limits.MaxSpeed, by default
// 300 km/h), gaps (intervals longer than Limits.MaxGap, by default 10
// minutes) and repeated positions; only speed jumps make a trace
// implausible. FilterSpeed, DropRepeatedPositions and Segment are the
// matching filters, and Filter applies a chosen set of them to many traces
// and counts what they changed. Validate, in contrast, checks well-formedness: finite
// in-range coordinates and strictly increasing times.
//
// The formats:
//
//   - PLT (GeoLife 1.3, OziExplorer's track format): six header lines,
//     then lat,lon,0,altitude_feet,days_since_1899-12-30,date,time. A file
//     is PLT when its header's fixed lines match ("Geolife trajectory" or
//     "OziExplorer Track Point File ...", the datum "WGS 84" (another
//     datum is refused as unsupported), "Altitude is in Feet", "Reserved
//     ...", and a point count on line 6; line 5, the track's settings, is
//     not read) and at least one row is a fix; anything else is refused
//     as not PLT (ErrNotPLT), naming the file, the line and what PLT
//     holds, so that random or binary bytes never read as an empty trace.
//     Altitude
//     -777 means unknown (NaN); feet are converted to metres (1 ft =
//     0.3048 m exactly). Times come from the date and time columns, in
//     ReadOptions.Location (UTC by default), and must agree with the day
//     number to within a second; the day number alone is used when they
//     are empty. The writer keeps GeoLife's layout (CRLF, UTC) and puts
//     sub-second time in the day number, so PLT round-trips times to the
//     millisecond. A PLT file holds one trace.
//   - CSV with a header row naming at least time, lat and lon (aliases such
//     as t, latitude, lng are accepted) and optionally uid and alt; any
//     other column becomes a point attribute, empty cells being absent.
//     Times are RFC 3339 (zone-less times are in ReadOptions.Location) or
//     Unix seconds, integer or fractional, parsed exactly to the
//     nanosecond. A new trace starts whenever the uid changes. The writer
//     emits RFC 3339 with as many fractional digits as needed.
//   - GeoJSON: a Feature or FeatureCollection. A LineString feature is one
//     trace, with a "times" property (RFC 3339 strings or Unix seconds, one
//     per position; togeojson's "coordinateProperties.times" and
//     "coordTimes" are read too) and optional "uid", "alts" (altitudes,
//     null when unknown) and "attrs" (one object per point). A
//     MultiLineString feature is one trace in segments: each line is
//     returned as a trace of the feature's uid (as GPX's track segments
//     are), and its per-position properties hold one array per line, or
//     one value per position over all the lines. Point features with a
//     "time" property are grouped by "uid" into traces and sorted by time;
//     their other properties become attributes. A line feature's other
//     properties (a name, a description) are not read; other geometry
//     types are bad records. The writer emits one LineString per trace,
//     with altitude as the third coordinate when every point has one.
//     Positions are decoded by hand rather than with paulmach/orb, whose
//     two-dimensional points would drop altitude.
//   - GPX 1.1: one trace per track segment (<trk><trkseg><trkpt>), with
//     <ele> and a required <time>. Point <extensions> are flattened into
//     attributes by leaf element name; waypoints, routes, metadata and the
//     free-text elements of tracks and points are not read.
//     The writer emits valid GPX 1.1 with its namespace, times in UTC,
//     longitude 180 as -180 (the schema's range is [-180, 180)), and the
//     uid and attributes as tracepriv extensions (namespace
//     https://github.com/tracepriv/tracepriv/gpx/1).
//
// Coordinates are written in the shortest form that parses back to the same
// float64, so conversions between formats lose nothing read but what a
// format cannot hold (time zones in GPX and PLT, attributes in PLT).
//
// # Operations
//
// Dedup keeps one point per timestamp and counts exact repeats apart from
// conflicting fixes. Segment splits on time gaps, SegmentBySpeed keeps the
// stretches whose every step is slower than a threshold (as the predictive
// mechanism's case study selects slow movement), FilterSpeed drops outliers
// reached at impossible speeds, Resample interpolates at regular times in
// local east-north-up planes (package geo), and Summarize reports sampling
// intervals, speeds and extent. Speeds are great-circle (haversine)
// distances over time, in metres per second.
//
// References: Zheng et al., "GeoLife GPS Trajectories 1.3 User Guide",
// Microsoft Research, 2011; RFC 7946 (GeoJSON); GPX 1.1 schema,
// https://www.topografix.com/GPX/1/1/; RFC 3339; Hyndman and Fan, "Sample
// quantiles in statistical packages", The American Statistician 50(4),
// 1996 (the type 7 quantiles of Summarize).
package trace
