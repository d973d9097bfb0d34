package corpus

// Names a corpus release writes in its output directory, besides the
// manifest, which the caller writes (sanitize.ManifestName).
const (
	// JournalName records the finished units of a run on one machine, so
	// that an interrupted run resumes (the pipeline keeps none).
	JournalName = ".tracepriv-journal.jsonl"
	// CertificatesDir holds one certificate per unit.
	CertificatesDir = "certificates"
	// PipelineMarkerName holds the release key of a tracepriv-pipeline run
	// until its charges are settled: while it is there, the directory holds
	// part of a pipeline release whose next run settles it.
	PipelineMarkerName = ".tracepriv-pipeline-release"
)

// PersonWorkers is the goroutines the sampling of one person of a corpus
// release uses (sanitize.Options.Workers): units are released in parallel,
// so each person gets one. The noise does not depend on it.
const PersonWorkers = 1
