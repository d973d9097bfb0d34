package testrun

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// KillWhen runs the test binary again as a child process, with env=1 in
// its environment and args after "--" (the binary's TestMain runs the
// command instead of the tests: a real process to kill), polls ready every
// 2 ms (on the file system, never a fixed sleep, which a busy machine
// outruns), waits after more, and kills it (SIGKILL). With limit > 0 the
// test fails if ready is still false after limit; with 0, go test's
// -timeout is the guard. It returns the child's standard error; a child
// that exits on its own first is not killed (the caller tells a finished
// run by its output).
func KillWhen(t testing.TB, env string, args []string, ready func() bool, limit, after time.Duration) string {
	t.Helper()
	child := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	child.Env = append(os.Environ(), env+"=1")
	var errBuf bytes.Buffer
	child.Stderr = &errBuf
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { child.Wait(); close(done) }()
	var deadline <-chan time.Time
	if limit > 0 {
		deadline = time.After(limit)
	}
	for !ready() {
		select {
		case <-done:
			return errBuf.String()
		case <-deadline:
			child.Process.Kill()
			<-done
			t.Fatalf("the child was not ready after %v; stderr:\n%s", limit, errBuf.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	time.Sleep(after)
	child.Process.Kill() // SIGKILL
	<-done
	return errBuf.String()
}

// ChildArgs is the child's side of KillWhen: in a TestMain, the arguments
// after "--" and true when the binary runs as KillWhen's child (env=1 in
// its environment), so it runs the command instead of the tests.
func ChildArgs(env string) ([]string, bool) {
	if os.Getenv(env) != "1" {
		return nil, false
	}
	args := os.Args[1:]
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[i+1:]
	}
	return args, true
}
