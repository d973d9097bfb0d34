package sanitize

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoCertificate is wrapped by FindCertificates when a release's
// certificates cannot be found: the caller must name them.
var ErrNoCertificate = errors.New("no certificate found")

// FindCertificates returns the certificates of the release at path: for
// a file, its certificate beside it (CertificatePath); for a corpus
// release (a directory holding ManifestName, or a file under one) the
// certificates the manifest lists for the people whose files are at or
// under path, each once.
func FindCertificates(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if c := CertificatePath(path); isRegularFile(c) {
			return []string{c}, nil
		}
	}
	// A corpus release: the manifest in the directory or above the file.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	root := abs
	if !st.IsDir() {
		root = filepath.Dir(abs)
	}
	for !isRegularFile(filepath.Join(root, ManifestName)) {
		up := filepath.Dir(root)
		if up == root {
			break
		}
		root = up
	}
	manifest := filepath.Join(root, ManifestName)
	if !isRegularFile(manifest) {
		if st.IsDir() {
			return nil, fmt.Errorf("%s: a directory without %s: not the output of a corpus release: %w", path, ManifestName, ErrNoCertificate)
		}
		return nil, fmt.Errorf("neither %s nor a corpus release's %s above %s: %w", CertificatePath(path), ManifestName, path, ErrNoCertificate)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	var out []string
	seen := map[string]bool{}
	for _, p := range m.Persons {
		covers := rel == "."
		for _, f := range p.Files {
			f = filepath.ToSlash(f)
			if f == rel || strings.HasPrefix(f, rel+"/") {
				covers = true
			}
		}
		if covers && p.Certificate != "" && !seen[p.Certificate] {
			seen[p.Certificate] = true
			out = append(out, filepath.Join(root, filepath.FromSlash(p.Certificate)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %s lists no person released in it: %w", path, manifest, ErrNoCertificate)
	}
	return out, nil
}

func isRegularFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
