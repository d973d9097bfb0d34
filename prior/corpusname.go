package prior

import (
	"strings"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// publicCorpus is the corpus name opt.Corpus as the published prior
// records it (FitRecord.Corpus, the origin's note): each input it names
// (comma-separated, as tracepriv fit joins its --in) that is a path of the
// machine, absolute or reaching above the working directory, is named
// relative to the working directory when inside it, else by its base name
// (infile.PublicName). Whatever a caller passes, the file never holds an
// absolute path, which would say whose machine, and which folders, made
// it.
func publicCorpus(name string) string {
	parts := strings.Split(name, ", ")
	for i, p := range parts {
		if p != "" {
			parts[i] = infile.PublicName(p)
		}
	}
	return strings.Join(parts, ", ")
}
