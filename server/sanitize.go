package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
	"github.com/tracepriv/tracepriv/trace"
)

// uploadFormat is the format of an upload: ?format=, else the content
// type.
func uploadFormat(r *http.Request) (trace.Format, error) {
	if f := r.URL.Query().Get("format"); f != "" {
		tf, err := trace.ParseFormat(f)
		if err != nil {
			return "", fieldErr("format", "?format=%s: want plt, csv, geojson or gpx", truncate(f, 32))
		}
		return tf, nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil {
		return "", errf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia,
			"say the trace format with ?format=plt|csv|geojson|gpx or a Content-Type (text/csv, application/geo+json, application/gpx+xml, application/vnd.geolife.plt)")
	}
	switch strings.ToLower(mt) {
	case "text/csv":
		return trace.CSV, nil
	case "application/geo+json", "application/json":
		return trace.GeoJSON, nil
	case "application/gpx+xml", "application/gpx", "application/xml", "text/xml":
		return trace.GPX, nil
	case "application/vnd.geolife.plt", "application/x-plt", "text/x-plt":
		return trace.PLT, nil
	}
	return "", errf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia,
		"Content-Type %q is not a trace format: use text/csv, application/geo+json, application/gpx+xml or application/vnd.geolife.plt, or ?format=", truncate(mt, 64))
}

// handleSanitize releases an uploaded trace with CIP and charges the
// person's account its certified epsilon.
func (s *Server) handleSanitize(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p, tok, err := s.authPerson(r, id, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, replayed, original, err := s.sanitize(w, r, p, tok)
	var body []byte
	if err == nil {
		body = withField(out.Body, "original", original)
	}
	s.writeCharged(w, r, "cip", err, replayed, out, body)
}

// withField adds "name": val to the JSON object obj (val nil: obj as is).
func withField(obj []byte, name string, val []byte) []byte {
	end := bytes.LastIndexByte(obj, '}')
	if val == nil || end < 0 {
		return obj
	}
	out := make([]byte, 0, len(obj)+len(name)+len(val)+4)
	out = append(out, obj[:end]...)
	out = append(out, ',', '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	out = append(out, val...)
	return append(out, obj[end:]...)
}

// readUpload reads an upload with the lenient input policy: every trace
// is the person's, empty traces are dropped.
func readUpload(body []byte, f trace.Format, uid string) ([]*trace.Trace, *trace.Report, int, error) {
	rd, err := trace.NewReader(bytes.NewReader(body), f, trace.ReadOptions{Name: "upload", UID: uid})
	if err != nil {
		return nil, nil, 0, err
	}
	all, err := trace.ReadAll(rd)
	if err != nil {
		return nil, nil, 0, errf(http.StatusBadRequest, api.CodeBadRequest, "the %s upload cannot be read: %v", f, err)
	}
	var traces []*trace.Trace
	points := 0
	for _, t := range all {
		if t.Len() == 0 {
			continue
		}
		points += t.Len()
		if t.Name == "" {
			t.Name = "upload"
		}
		traces = append(traces, t)
	}
	if len(traces) == 0 {
		return nil, nil, 0, errf(http.StatusBadRequest, api.CodeBadRequest, "the %s upload holds no point (%d rows skipped)", f, rd.Report().SkippedRows())
	}
	// The person rule (trace.PersonRule): an upload is one person, the
	// token's, whatever uids its data carries.
	trace.OnePerson(uid, "upload", traces)
	return traces, rd.Report(), points, nil
}

// originalGeoJSON is the upload as read, in GeoJSON.
func originalGeoJSON(traces []*trace.Trace) ([]byte, error) {
	var b bytes.Buffer
	if err := trace.Write(&b, traces, trace.GeoJSON); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// replayOriginal re-derives the original of a replayed upload (the same
// bytes, as the request MAC matched).
func replayOriginal(body []byte, f trace.Format, uid string) []byte {
	traces, _, _, err := readUpload(body, f, uid)
	if err != nil {
		return nil
	}
	o, err := originalGeoJSON(traces)
	if err != nil {
		return nil
	}
	return o
}

func (s *Server) sanitize(w http.ResponseWriter, r *http.Request, p *personInfo, tok string) (_ *store.Answer, _ bool, original []byte, _ error) {
	cfg := p.cfg
	ctx := r.Context()
	key, err := idempotencyKey(r, false)
	if err != nil {
		return nil, false, nil, err
	}
	inFmt, outFmt, target, err := sanitizeQuery(r, cfg)
	if err != nil {
		return nil, false, nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opt.MaxUploadBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, false, nil, errf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "upload larger than %d bytes", s.opt.MaxUploadBytes)
		}
		return nil, false, nil, errf(http.StatusBadRequest, api.CodeBadRequest, "reading the upload: %v", err)
	}
	canon := []byte(fmt.Sprintf("%s\x00%s\x00%s\x00", inFmt, outFmt, formatFloat(target)))
	mac := requestMAC(tok, "sanitize", append(canon, body...))
	if key == "" {
		// No key: the request cannot be recognised when retried.
		key = "auto:" + requestID(r)
	}
	// A retry of a committed upload is answered without recomputing, once
	// its charge is durable (Read waits for it); and an upload that cannot
	// fit is refused before computing. The decisive checks are in the
	// transaction below.
	var found *store.Answer
	var row *store.PersonRow
	if err := s.store.Read(ctx, p.id, func(v *store.View) error {
		var err error
		if found, err = v.Answer(p.id, key); err != nil {
			return err
		}
		row, err = v.Person(p.id)
		return err
	}); err != nil {
		return nil, false, nil, err
	}
	if err := checkToken(row, tok); err != nil {
		return nil, false, nil, err
	}
	if found != nil {
		a, err := replay(found, mac)
		if err != nil {
			return nil, false, nil, err
		}
		return a, true, replayOriginal(body, inFmt, p.id), nil
	}
	// The release is certified at the person's order and radius, the
	// account's currency: the target is the most it can cost.
	if err := admit(p, row, api.MechanismCIP, account(p, row).Cost(budget.CIP, target, 0)); err != nil {
		return nil, false, nil, err
	}

	traces, rep, points, err := readUpload(body, inFmt, p.id)
	if err != nil {
		return nil, false, nil, err
	}
	if points > s.opt.MaxTracePoints {
		return nil, false, nil, errf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "the upload has %d points; this server sanitises at most %d per request", points, s.opt.MaxTracePoints)
	}
	if original, err = originalGeoJSON(traces); err != nil {
		return nil, false, nil, err
	}
	outs, cert, err := s.compute(ctx, traces, cfg, target)
	if err != nil {
		return nil, false, nil, err
	}
	cert.RecordInput(rep)
	traceJSON, cb, err := encodeRelease(outs, outFmt, cert)
	if err != nil {
		return nil, false, nil, err
	}
	amount := cert.EpsilonMax
	if len(cert.Persons) != 1 || !(amount >= 0) || !finite(amount) {
		return nil, false, nil, fmt.Errorf("sanitize: certificate with %d persons and epsilon %v", len(cert.Persons), amount)
	}
	detail, err := json.Marshal(map[string]any{
		"epsilon_certified": amount, "epsilon_kind": cert.EpsilonKind, "epsilon_target": target,
		"lambda": cfg.CIP.Lambda, "radius_m": cfg.CIP.Radius, "points": points, "traces": len(outs),
		"design": cert.Design, "path": cert.Path, "input_format": inFmt, "output_format": outFmt,
	})
	if err != nil {
		return nil, false, nil, err
	}
	answer, replayed, err := s.keyedUpdate(ctx, p.id, key, tok, mac, func(tx *store.Tx, row *store.PersonRow) (*store.Answer, error) {
		e := account(p, row).Cost(budget.CIP, amount, 0)
		if err := admit(p, row, api.MechanismCIP, e); err != nil {
			return nil, err
		}
		spent := row.Spent + e
		seq := row.Seq + 1
		resp := api.SanitizeResponse{
			Format: string(outFmt), Trace: traceJSON, Certificate: cb.Bytes(), EpsilonCharged: amount,
			EpsilonKind: cert.EpsilonKind, EpsilonTarget: target, Lambda: cfg.CIP.Lambda, RadiusM: cfg.CIP.Radius,
			Spent: spent, Remaining: math.Max(0, row.Budget-spent), Budget: row.Budget, Unit: api.UnitAccount,
			Points: points, Traces: len(outs), SkippedRows: cert.SkippedRows, RMSNoiseM: cert.Persons[0].RMSNoiseM,
			Seq: seq, RequestID: requestID(r),
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return nil, err
		}
		b = append(b, '\n')
		ans := store.Answer{MAC: mac, Status: http.StatusOK, ContentType: "application/json", Body: b}
		// The digest of the certificate as the answer carries it (compact
		// JSON, as json.Marshal embeds it), which the client can recompute.
		var compact bytes.Buffer
		if err := json.Compact(&compact, cb.Bytes()); err != nil {
			return nil, err
		}
		digest := sha256.Sum256(compact.Bytes())
		c := &store.ChargeRow{Person: p.id, Seq: seq, Time: s.opt.Now(), Amount: amount, Epsilon: e, Certificate: hex.EncodeToString(digest[:]),
			RequestID: requestID(r), Key: key, Detail: detail, Answer: ans}
		if err := tx.ChargeCIP(row, c, slack); err != nil {
			return nil, err
		}
		tx.OnCommit(func() {
			s.metrics.charged.WithLabelValues("cip").Add(amount)
			s.metrics.charges.WithLabelValues("cip").Inc()
		})
		return &ans, nil
	})
	if err != nil {
		return nil, false, nil, err
	}
	return answer, replayed, original, nil
}

// sanitizeQuery reads the sanitize request's query: the upload's format,
// the output format (?output, default the upload's) and the target epsilon
// (?epsilon, default the person's); any other parameter is refused.
func sanitizeQuery(r *http.Request, cfg *personConfig) (inFmt, outFmt trace.Format, target float64, err error) {
	inFmt, err = uploadFormat(r)
	if err != nil {
		return "", "", 0, err
	}
	outFmt = inFmt
	if o := r.URL.Query().Get("output"); o != "" {
		if outFmt, err = trace.ParseFormat(o); err != nil {
			return "", "", 0, fieldErr("output", "?output=%s: want plt, csv, geojson or gpx (default: the upload's format)", truncate(o, 32))
		}
	}
	target = cfg.CIP.Epsilon
	if e := r.URL.Query().Get("epsilon"); e != "" {
		v, err := strconv.ParseFloat(e, 64)
		if err != nil || !(v > 0) || !finite(v) {
			return "", "", 0, fieldErr("epsilon", "?epsilon=%s: want a finite target > 0", truncate(e, 32))
		}
		target = v
	}
	for k := range r.URL.Query() {
		if k != "format" && k != "output" && k != "epsilon" {
			return "", "", 0, fieldErr(k, "unknown query parameter %q (format, output, epsilon)", truncate(k, 32))
		}
	}
	return inFmt, outFmt, target, nil
}

// encodeRelease writes the released traces in outFmt (GeoJSON inline, any
// other format as a JSON string) and the certificate, as the answer
// carries them.
func encodeRelease(outs []*trace.Trace, outFmt trace.Format, cert *sanitize.Certificate) (json.RawMessage, *bytes.Buffer, error) {
	var tb, cb bytes.Buffer
	if err := trace.Write(&tb, outs, outFmt); err != nil {
		return nil, nil, err
	}
	traceJSON := json.RawMessage(tb.Bytes())
	if outFmt != trace.GeoJSON {
		var err error
		if traceJSON, err = json.Marshal(tb.String()); err != nil {
			return nil, nil, err
		}
	}
	if err := sanitize.WriteCertificate(&cb, cert); err != nil {
		return nil, nil, err
	}
	return traceJSON, &cb, nil
}

// compute releases traces under the person's CIP configuration in one of
// the server's sanitize slots. The slot is taken with the request's
// context and given back by defer: a client that leaves while it waits
// or computes frees it (the release stops at its next stage), and so
// does a panic.
func (s *Server) compute(ctx context.Context, traces []*trace.Trace, cfg *personConfig, target float64) ([]*trace.Trace, *sanitize.Certificate, error) {
	prior := cfg.CIP.Prior
	if prior == nil {
		prior = s.prior
	}
	opt := sanitize.Options{Prior: prior, Epsilon: target, Lambda: cfg.CIP.Lambda, Radius: cfg.CIP.Radius}
	if o := cfg.CIP.Origin; o != nil {
		opt.Origin = &geo.Point{Lat: o.Lat, Lon: o.Lon}
	}
	if err := s.slots.Acquire(ctx, 1); err != nil {
		return nil, nil, err
	}
	defer s.slots.Release(1)
	outs, cert, err := s.opt.release(ctx, traces, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, domainErr(errUnreleasable, "", "%v", err)
	}
	return outs, cert, nil
}
