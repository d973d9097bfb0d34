package device

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/prior"
)

// The first release of a page or an app designs the prior family's noise
// envelope (a linear program; most of the first release's time, issue 33).
// The design depends on public inputs only, the prior family and the
// envelope's options (the computation path), not on the trace, epsilon,
// lambda or the radius: one design serves every later release with the
// same family, of any length. Plan.Design hands it out as a document the
// device stores (a page's localStorage, an app's files) under its
// DesignKey; UseDesign takes it back on the next start. Nothing stored is
// trusted: the document must be the one its key names (the SHA-256 of the
// inputs) and its digest covers (the SHA-256 of the design's bytes), and
// the envelope's domination over the family is proven again on its
// weights (cip.UseEnvelope) before a release uses it; a refused document
// changes nothing, and the next release designs the envelope again.

// storedDesign is the document Plan.Design returns.
type storedDesign struct {
	// Key is DesignKey of the design's inputs; SHA256 is the SHA-256 of
	// Design's bytes, in hex.
	Key    string          `json:"key"`
	SHA256 string          `json:"sha256"`
	Design json.RawMessage `json:"design"`
}

// designInputs are the public inputs an envelope design depends on.
type designInputs struct {
	Version int                 `json:"version"`
	Family  prior.FamilySet     `json:"family"`
	Options cip.EnvelopeOptions `json:"options"`
}

// designKey is the SHA-256, in hex, of the JSON of a design's inputs: the
// name a device stores the design under.
func designKey(d *cip.EnvelopeDesign) (string, error) {
	fam := d.Family
	fam.HeldOutCoverage = nil // a measurement of the fit, not an input of the design
	b, err := json.Marshal(designInputs{Version: d.Version, Family: fam, Options: d.Options})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// encodeDesign returns the stored document of d.
func encodeDesign(d *cip.EnvelopeDesign) (string, error) {
	body, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	key, err := designKey(d)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	doc, err := json.Marshal(storedDesign{Key: key, SHA256: hex.EncodeToString(sum[:]), Design: body})
	return string(doc), err
}

// Design returns the plan's envelope design as a JSON document to store
// under DesignKey(doc) and give back to UseDesign on the device's next
// start, or "" when the release designs no envelope (a single-lengthscale
// prior with proportional noise).
func (p *Plan) Design() string { return p.design }

// DesignKey returns the key a design document (Plan.Design) is stored
// under: the SHA-256, in hex, of the inputs the design depends on (the
// prior family and the envelope's options).
func DesignKey(doc string) (string, error) {
	var s storedDesign
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return "", fmt.Errorf("device: design document: %w", err)
	}
	return s.Key, nil
}

// ErrDesignRefused means a stored design document was not used: it is not
// the document its key and digest name, or not an envelope of its family.
// Nothing changed; the next release designs the envelope again (drop the
// stored document and store the next Plan.Design).
var ErrDesignRefused = errors.New("device: the stored envelope design is refused")

// UseDesign takes back a design document Plan.Design returned, stored
// under key: the document must name key, its design must have key's
// inputs and the digest it states, and the envelope must dominate its
// family (cip.UseEnvelope proves it again). A later PlanRelease or Release
// with the same prior family then uses it instead of designing the
// envelope. A refused document returns ErrDesignRefused and changes
// nothing.
func UseDesign(key, doc string) error {
	var s storedDesign
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return fmt.Errorf("%w: not a design document: %v", ErrDesignRefused, err)
	}
	if s.Key != key {
		return fmt.Errorf("%w: the document is for inputs %s, stored under %s", ErrDesignRefused, s.Key, key)
	}
	sum := sha256.Sum256(s.Design)
	if hex.EncodeToString(sum[:]) != s.SHA256 {
		return fmt.Errorf("%w: its design's SHA-256 is %x, the document states %s (corrupted)", ErrDesignRefused, sum, s.SHA256)
	}
	var d cip.EnvelopeDesign
	dec := json.NewDecoder(bytes.NewReader(s.Design))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("%w: %v", ErrDesignRefused, err)
	}
	if k, err := designKey(&d); err != nil || k != key {
		return fmt.Errorf("%w: the design's inputs are %s, not %s", ErrDesignRefused, k, key)
	}
	if _, err := cip.UseEnvelope(&d); err != nil {
		return fmt.Errorf("%w: %v", ErrDesignRefused, err)
	}
	return nil
}
