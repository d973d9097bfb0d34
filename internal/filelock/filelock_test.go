package filelock

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLockExcludes checks that a held lock makes a second Lock wait and
// then fail with ErrBusy, and that goroutines holding it in turn never
// overlap.
func TestLockExcludes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(p, 50*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock while held: %v, want ErrBusy", err)
	}
	unlock()
	var (
		mu     sync.Mutex
		inside int
		wg     sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := Lock(p, time.Hour) // exclusion is tested, not how fast it is handed on
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			n := inside
			mu.Unlock()
			if n != 1 {
				t.Errorf("%d holders at once", n)
			}
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			u()
		}()
	}
	wg.Wait()
}
