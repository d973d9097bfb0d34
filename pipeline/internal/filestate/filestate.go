// Package filestate tells the pipeline's tests whether a file was written
// again: a run that resumes a killed release must leave the files it kept
// as they were.
package filestate

import (
	"crypto/sha256"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Of is what says path was not written again: its content's hash, inode
// (an atomic rewrite renames a new file over it) and modification time.
func Of(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var ino uint64
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = s.Ino
	}
	return fmt.Sprintf("%x inode %d modified %s", sha256.Sum256(b), ino, st.ModTime())
}
