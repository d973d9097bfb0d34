// Package atomicfile writes files so that readers never see a partial file:
// data goes to a temporary file in the same directory, is synced, and is
// renamed over the target only when everything succeeded.
package atomicfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Write creates or replaces path with what fill writes. On any error the
// target is left untouched and the temporary file removed.
func Write(path string, perm os.FileMode, fill func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = fill(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteBytes atomically replaces path with data.
func WriteBytes(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteJSON atomically replaces path with v as indented JSON and a final
// newline: the layout of tracepriv's --json output, so that a result file
// and the command's output are the same bytes.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteBytes(path, append(b, '\n'), 0o644)
}

// File is one file of a group written by WriteGroup.
type File struct {
	Path string
	Perm os.FileMode
	Fill func(w io.Writer) error
}

// WriteGroup writes several files so that they land together or not at
// all: every file is first written completely to a temporary file beside
// its target; only when all succeeded are they renamed over their targets.
// If a rename fails, the targets already replaced are restored from
// hard-linked backups (or removed if they did not exist), so a result is
// never left without its certificate.
func WriteGroup(files []File) (err error) {
	type staged struct{ tmp, backup, path string }
	var done []staged
	cleanup := func() {
		for _, s := range done {
			os.Remove(s.tmp)
			if s.backup != "" {
				os.Remove(s.backup)
			}
		}
	}
	for _, f := range files {
		dir, base := filepath.Split(f.Path)
		if dir == "" {
			dir = "."
		}
		tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
		if err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		name := tmp.Name()
		tmp.Close()
		done = append(done, staged{tmp: name, path: f.Path})
		// Write fills the temporary file through Write's own machinery
		// (buffer, sync), then the rename below is ours.
		if err := writeTo(name, f.Perm, f.Fill); err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	for i := range done {
		if _, err := os.Stat(done[i].path); err == nil {
			b := done[i].tmp + ".bak"
			if err := os.Link(done[i].path, b); err != nil {
				cleanup()
				return fmt.Errorf("write %s: backing up the old file: %w", done[i].path, err)
			}
			done[i].backup = b
		}
	}
	for i, s := range done {
		if err := os.Rename(s.tmp, s.path); err != nil {
			// Undo the renames already made.
			for _, r := range done[:i] {
				if r.backup != "" {
					os.Rename(r.backup, r.path)
				} else {
					os.Remove(r.path)
				}
			}
			cleanup()
			return fmt.Errorf("write %s: %w", s.path, err)
		}
	}
	for _, s := range done {
		if s.backup != "" {
			os.Remove(s.backup)
		}
	}
	return nil
}

// writeTo fills the file at name (which exists), syncing it.
func writeTo(name string, perm os.FileMode, fill func(w io.Writer) error) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := fill(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteDurable is Write followed by a sync of the directory, so that the
// rename itself survives a crash: when it returns nil the new content is
// on disk under path. Records that must be durable before something else
// happens (a budget charge before a release) use it.
func WriteDurable(path string, perm os.FileMode, fill func(w io.Writer) error) error {
	if err := Write(path, perm, fill); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory, making the renames and creations in it
// durable. File systems that cannot sync a directory (EINVAL) are
// tolerated.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// MkdirAll is os.MkdirAll that returns the directories it created,
// outermost first, so that a run that fails can take them away again
// (RemoveCreated) and leave the file system as it found it.
func MkdirAll(path string, perm os.FileMode) ([]string, error) {
	var missing []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			break // let MkdirAll report it
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(path, perm); err != nil {
		return nil, err
	}
	slices.Reverse(missing)
	return missing, nil
}

// RemoveCreated removes the directories MkdirAll created, innermost
// first, each only if it is empty: what a user put there meanwhile is
// never deleted.
func RemoveCreated(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		if os.Remove(created[i]) != nil {
			return
		}
	}
}
