package device

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sanitize"
)

// Charge before draw (issue 33): the device asks the service's ledger to
// charge a release, waits for the durable yes, and only then draws. For a
// trace release the charge names the certificate by its digest, so the
// certificate must be known before the draw. It is: a release's certificate
// depends on public inputs only (the timestamps, the prior family, the
// options), and the device keeps the time taken out of it (the answer's
// "seconds"). PlanRelease designs and certifies the release from the
// trace's public part without reading a coordinate (sanitize.Prepare);
// Plan.Draw then draws on the true trace from that same design
// (sanitize.Prepared.Draw) and refuses to answer if the certificate's
// bytes are not the ones planned.
//
// Each charge pays for one draw. The device records the charge id of every
// draw (Claim) and refuses a second draw for it, so a replayed charge (the
// same Idempotency-Key answered again with the same charge_id, as after a
// crash of the service between its commit and its answer) never buys two.

// ErrCharged means the charge id was already used for a draw on this
// device: a charge pays for one release or one session.
var ErrCharged = errors.New("device: this charge already paid for a draw; charge again for another")

var claimed = struct {
	sync.Mutex
	ids map[string]bool
}{ids: map[string]bool{}}

// Claim records that chargeID pays for a draw about to happen, or returns
// ErrCharged when it was claimed before (in this process, or in a list
// restored by RestoreClaims). Plan.Draw and NewChargedSession claim their
// charge themselves.
func Claim(chargeID string) error {
	if chargeID == "" {
		return errors.New("device: a draw needs the charge_id the service answered to its charge")
	}
	claimed.Lock()
	defer claimed.Unlock()
	if claimed.ids[chargeID] {
		return fmt.Errorf("%w (charge %q)", ErrCharged, chargeID)
	}
	claimed.ids[chargeID] = true
	return nil
}

// Claims returns the claimed charge ids as a JSON list of strings, to
// persist (a page's localStorage, an app's files) and give back to
// RestoreClaims when the device restarts.
func Claims() string {
	claimed.Lock()
	ids := make([]string, 0, len(claimed.ids))
	for id := range claimed.ids {
		ids = append(ids, id)
	}
	claimed.Unlock()
	slices.Sort(ids)
	b, _ := json.Marshal(ids)
	return string(b)
}

// RestoreClaims adds the charge ids of a JSON list Claims returned to the
// claimed ones.
func RestoreClaims(listJSON string) error {
	var ids []string
	if err := json.Unmarshal([]byte(listJSON), &ids); err != nil {
		return fmt.Errorf("device: claimed charges: want a JSON list of charge ids: %w", err)
	}
	claimed.Lock()
	defer claimed.Unlock()
	for _, id := range ids {
		claimed.ids[id] = true
	}
	return nil
}

// NewChargedSession starts a session of configJSON (as NewSession) paid by
// the service's charge chargeID (mechanism "geoind"), claiming it: a
// second session for the same charge is refused with ErrCharged.
func NewChargedSession(configJSON, chargeID string) (*Session, error) {
	s, err := NewSession(configJSON)
	if err != nil {
		return nil, err
	}
	if err := Claim(chargeID); err != nil {
		return nil, err
	}
	return s, nil
}

// Plan is a trace release planned on the device: the certificate it will
// carry and its digest are known, nothing has been drawn from the trace.
type Plan struct {
	in       *releaseInput
	prepared *sanitize.Prepared
	cert     string
	digest   string
	charge   string
	seconds  float64 // the time the plan took
	design   string  // Design's document
	mu       sync.Mutex
	chargeID string // the charge it was drawn for; "" before
}

// planCharge is the body of the charge request a Plan asks for
// (POST /v1/people/{id}/charges).
type planCharge struct {
	Mechanism         string  `json:"mechanism"`
	Epsilon           float64 `json:"epsilon"`
	RadiusM           float64 `json:"radius_m"`
	Lambda            float64 `json:"lambda"`
	CertificateSHA256 string  `json:"certificate_sha256"`
}

// PlanRelease plans the release Release would make of traceData (same
// arguments) without drawing from it: its certificate, its digest and the
// charge to ask for. Draw it with Plan.Draw once the service has charged.
func PlanRelease(traceData []byte, format, optionsJSON string) (*Plan, error) {
	return plan(traceData, format, optionsJSON, noise.Secure())
}

// PlanReleaseSeeded is PlanRelease drawing from noise.Seeded(seed), for
// tests only (not private): its Draw releases what ReleaseSeeded does.
func PlanReleaseSeeded(traceData []byte, format, optionsJSON string, seed int64) (*Plan, error) {
	src, err := seeded(seed)
	if err != nil {
		return nil, err
	}
	return plan(traceData, format, optionsJSON, src)
}

func plan(data []byte, format, optionsJSON string, src noise.Source) (*Plan, error) {
	in, err := parseRelease(data, format, optionsJSON)
	if err != nil {
		return nil, err
	}
	// The design and the certificate from the public part alone: the
	// traces' uid, names and timestamps.
	prepared, err := sanitize.Prepare(context.Background(), sanitize.PublicOf(in.traces), in.options(src))
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	cert := prepared.Certificate()
	doc, digest, seconds, err := in.certificate(cert)
	if err != nil {
		return nil, err
	}
	p := &Plan{in: in, prepared: prepared, cert: doc, digest: digest, seconds: seconds}
	if d := prepared.EnvelopeDesign(); d != nil {
		if p.design, err = encodeDesign(d); err != nil {
			return nil, err
		}
	}
	c, err := json.Marshal(planCharge{Mechanism: "cip", Epsilon: cert.EpsilonMax, RadiusM: in.opt.Radius, Lambda: in.opt.Lambda,
		CertificateSHA256: digest})
	if err != nil {
		return nil, err
	}
	p.charge = string(c)
	return p, nil
}

// Certificate is the certificate the release will carry
// (sanitize.WriteCertificate's document, "seconds" 0).
func (p *Plan) Certificate() string { return p.cert }

// CertificateSHA256 is the SHA-256 of Certificate's bytes, 64 hex digits:
// what the charge names.
func (p *Plan) CertificateSHA256() string { return p.digest }

// Charge is the JSON body of the charge to ask the service for before
// drawing: {"mechanism": "cip", "epsilon": the certified epsilon,
// "radius_m", "lambda", "certificate_sha256"}.
func (p *Plan) Charge() string { return p.charge }

// Draw releases the planned trace, paid by the service's charge chargeID
// (the charge_id of its answer to Charge). It claims the charge first: a
// charge id used before, by this plan or another draw, is refused with
// ErrCharged and nothing is drawn. The answer is Release's JSON; a release
// whose certificate differs from the planned one is not answered.
func (p *Plan) Draw(chargeID string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chargeID != "" {
		return nil, fmt.Errorf("%w: this plan was drawn for charge %q; plan the release again", ErrCharged, p.chargeID)
	}
	if err := Claim(chargeID); err != nil {
		return nil, err
	}
	p.chargeID = chargeID
	start := time.Now()
	outs, cert, err := p.prepared.Draw(context.Background(), p.in.traces)
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	// The certificate drawn under, written again: the charge named its
	// bytes, and nothing goes out under others.
	var cb bytes.Buffer
	if err := sanitize.WriteCertificate(&cb, cert); err != nil {
		return nil, fmt.Errorf("device: writing the certificate: %w", err)
	}
	if sum := sha256.Sum256(cb.Bytes()); hex.EncodeToString(sum[:]) != p.digest {
		// The charge named another certificate: the release must not go out
		// under it.
		return nil, fmt.Errorf("device: the drawn release's certificate (sha256 %x) is not the one charged (%s); nothing is released", sum, p.digest)
	}
	return p.in.answer(outs, cert, cb.String(), p.digest, p.seconds+time.Since(start).Seconds())
}
