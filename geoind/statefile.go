package geoind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/noise"
)

// ReadState reads a session state file.
func ReadState(path string) (State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, err
	}
	var st State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return State{}, fmt.Errorf("%s: session state: %w", path, err)
	}
	return st, nil
}

// WriteState replaces the state file atomically and durably: the new
// content is written to a temporary file, synced, renamed over path, and
// the directory is synced so that the rename survives a power loss.
func WriteState(path string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeStateFile(path, append(b, '\n'))
}

// writeStateFile is a variable so that tests can simulate a crash.
var writeStateFile = func(path string, data []byte) error {
	if err := atomicfile.WriteBytes(path, data, 0o600); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// QueryFile answers one query against the session stored at path and
// persists the new state before returning the report. If path does not
// exist and cfg is non-nil, a new session with cfg is started.
//
// The order is what makes it crash-safe: the released point is returned
// only after the state recording its cost is durably on disk. A crash or
// a failed write before that point leaves the old state and releases
// nothing (the drawn noise is discarded and never seen); a crash after it
// leaves the cost recorded even if the caller never saw the point. Budget
// can therefore be over-counted, never rolled back. The state file is
// locked for the duration, so concurrent queries cannot both spend from
// the same budget snapshot.
func QueryFile(path string, cfg *Config, p geo.Point, t time.Time, src noise.Source) (Report, error) {
	unlock, err := lockState(path)
	if err != nil {
		return Report{}, err
	}
	defer unlock()
	var s *Session
	st, err := ReadState(path)
	switch {
	case err == nil:
		s, err = Resume(st, src)
		if err != nil {
			return Report{}, fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, fs.ErrNotExist) && cfg != nil:
		if s, err = NewSession(*cfg, src); err != nil {
			return Report{}, err
		}
	default:
		return Report{}, err
	}
	rep, err := s.Query(p, t)
	if err != nil {
		return Report{}, err
	}
	if err := WriteState(path, s.State()); err != nil {
		return Report{}, fmt.Errorf("saving session state (nothing was released): %w", err)
	}
	return rep, nil
}
