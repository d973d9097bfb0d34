package cli

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Ticker reports the progress of long work on stderr: a bar on a
// terminal, and a line every Interval otherwise (a log, a CI job), so that
// a long run is never silent. --json output goes to stdout and is not
// disturbed; --quiet silences it.
type Ticker struct {
	mu       sync.Mutex
	env      *Env
	what     string
	total    int
	bar      interface{ Set(int) error }
	last     time.Time
	start    time.Time
	Interval time.Duration
}

// Ticker starts a progress report of total steps.
func (e *Env) Ticker(total int, what string) *Ticker {
	t := &Ticker{env: e, what: what, total: total, start: time.Now(), last: time.Now(), Interval: 10 * time.Second}
	if f, ok := e.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !e.Quiet {
		t.bar = e.Progress(total, what)
	}
	return t
}

// Set reports done steps of the total, with a detail for the log line.
func (t *Ticker) Set(done int, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.env.Quiet {
		return
	}
	if t.bar != nil {
		t.bar.Set(done)
		return
	}
	now := time.Now()
	if now.Sub(t.last) < t.Interval && done < t.total {
		return
	}
	t.last = now
	el := now.Sub(t.start).Round(time.Second)
	eta := ""
	if done > 0 && done < t.total {
		eta = fmt.Sprintf(", about %s left", (time.Duration(float64(now.Sub(t.start)) * float64(t.total-done) / float64(done))).Round(time.Second))
	}
	fmt.Fprintf(t.env.Stderr, "%s: %d/%d %s (%s elapsed%s)\n", t.what, done, t.total, detail, el, eta)
}
