package store

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseWaitsForCheckpointer: once Close has returned, the SQLite store
// runs nothing more on its databases, so its owner may remove the data
// directory. The checkpointer used to be left running: a checkpoint in
// flight at Close held a connection database/sql closes only when it is
// returned, after Close, and the server tests' t.TempDir cleanup then
// failed now and then with "directory not empty". Here the checkpointer
// runs back to back (every microsecond), so Close nearly always meets one
// in flight; with the old Close, 14 checkpoints of one run ended after it.
func TestCloseWaitsForCheckpointer(t *testing.T) {
	t.Parallel()
	var late atomic.Int64
	for round := range 40 {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		var closed atomic.Bool
		st, err := Open(context.Background(), dir, "", Options{
			checkpointEvery: time.Microsecond,
			onCheckpoint: func() {
				if closed.Load() {
					late.Add(1)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		addPerson(t, st, "c")
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		closed.Store(true)
		// Give a checkpoint that outlived Close time to finish and be seen.
		time.Sleep(2 * time.Millisecond)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatalf("round %d: removing the data directory after Close: %v", round, err)
		}
	}
	if n := late.Load(); n > 0 {
		t.Errorf("%d checkpoints ended after Close had returned", n)
	}
}
