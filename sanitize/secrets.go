package sanitize

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// ParseSecrets reads secrets given as one word, the value of "tracepriv
// sanitize --secrets": "all" (nil: every point is a basic secret), a list
// in the syntax of ParseSecretTimes, or the name of a file of them
// (ReadSecretTimes; gzip is read by content). A value that looks like a
// path (a slash, or an extension that is not a time's fraction) and names
// no file is an error, rather than a list that fails to parse.
func ParseSecrets(v string) ([][]time.Time, error) {
	if v == "all" {
		return nil, nil
	}
	st, statErr := os.Stat(v)
	if statErr != nil && (strings.ContainsAny(v, `/\`) || filepath.Ext(v) != "" && !strings.ContainsAny(filepath.Ext(v), "0123456789")) {
		return nil, fmt.Errorf("%s: %w (give a file of secrets, a list of times, or all)", v, statErr)
	}
	if statErr == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give a file of secrets, a list of times, or all", v)
	}
	if statErr != nil {
		return ParseSecretTimes(v)
	}
	fh, err := infile.Open(v)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return ReadSecretTimes(fh, v)
}
