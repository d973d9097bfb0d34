package device

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
)

// Session is one geoind session on the device: the public configuration,
// the run of released steps and the budget spent (geoind.Session). Persist
// its State after every query; Resume continues from it.
type Session struct {
	s   *geoind.Session
	src noise.Source
}

// answer is the JSON a Query returns: the released report, the session's
// state after it (to persist before showing the report, so that a released
// step is never forgotten), and the randomness it was drawn from.
type answer struct {
	Report     geoind.Report `json:"report"`
	State      geoind.State  `json:"state"`
	Randomness string        `json:"randomness"`
	Private    bool          `json:"private"`
}

// NewSession starts a session of the geoind.Config in configJSON, drawing
// from crypto/rand.
func NewSession(configJSON string) (*Session, error) {
	return newSession(configJSON, noise.Secure())
}

// NewSeededSession starts a session that draws from noise.Seeded(seed). It
// is for tests only: its releases are reproducible by anyone with the seed,
// and every answer says "private": false.
func NewSeededSession(configJSON string, seed int64) (*Session, error) {
	src, err := seeded(seed)
	if err != nil {
		return nil, err
	}
	return newSession(configJSON, src)
}

func newSession(configJSON string, src noise.Source) (*Session, error) {
	var cfg geoind.Config
	if err := decode(configJSON, &cfg, "config"); err != nil {
		return nil, err
	}
	s, err := geoind.NewSession(cfg, src)
	if err != nil {
		return nil, fmt.Errorf("device: config: %w", err)
	}
	return &Session{s: s, src: src}, nil
}

// ResumeSession continues a session from the geoind.State JSON a
// Session's State or Query returned, drawing from crypto/rand. A state
// whose spending does not match its run is refused (geoind.Resume).
func ResumeSession(stateJSON string) (*Session, error) {
	var st geoind.State
	if err := decode(stateJSON, &st, "state"); err != nil {
		return nil, err
	}
	src := noise.Secure()
	s, err := geoind.Resume(st, src)
	if err != nil {
		return nil, fmt.Errorf("device: state: %w", err)
	}
	return &Session{s: s, src: src}, nil
}

// Query releases the location (lat, lon) queried at unixMillis
// (milliseconds since 1970, UTC) and returns the answer as JSON:
// {"report": geoind.Report, "state": geoind.State, "randomness": ...,
// "private": ...}. On error, including an exhausted budget
// (geoind.ErrExhausted), nothing is released and the session is unchanged.
func (s *Session) Query(lat, lon float64, unixMillis int64) (string, error) {
	rep, err := s.s.Query(geo.Point{Lat: lat, Lon: lon}, time.UnixMilli(unixMillis).UTC())
	if err != nil {
		return "", fmt.Errorf("device: query: %w", err)
	}
	b, err := json.Marshal(answer{Report: rep, State: s.s.State(), Randomness: noise.Describe(s.src), Private: noise.IsSecure(s.src)})
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// State returns the session's geoind.State as JSON. It holds no true
// location: the configuration, the released steps and the budget spent.
func (s *Session) State() (string, error) {
	b, err := json.Marshal(s.s.State())
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Exhausted reports whether err means the session's budget is spent.
func Exhausted(err error) bool { return geoind.IsExhausted(err) }

// seeded returns noise.Seeded for a seed gomobile can pass (int64, so not
// negative).
func seeded(seed int64) (noise.Source, error) {
	if seed < 0 {
		return nil, fmt.Errorf("device: seed %d: want a seed >= 0", seed)
	}
	return noise.Seeded(uint64(seed)), nil
}

// decode reads one JSON document of the library's shape strictly
// (jsondoc): a misspelt key would otherwise silently fall back to a default.
func decode(doc string, v any, what string) error {
	if err := jsondoc.Decode([]byte(doc), v); err != nil {
		return fmt.Errorf("device: %s JSON: %w", what, err)
	}
	return nil
}

// Version is the module's version: the tracepriv module's from the build
// information, "devel" in a build from a work tree.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
