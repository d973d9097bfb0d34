package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// CheckFigure refuses, before any work, a figure path (of flag, e.g.
// "--plot") in a format viz.Save does not write.
func CheckFigure(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := viz.CheckFormat(path); err != nil {
		return usagef("%s %w", flag, err)
	}
	return nil
}

// Every command that writes files checks its outputs with CheckOutputs
// before any work, and writes each file atomically (atomicfile, or
// trace.WriteFile and viz.Save, which use it), so that an interrupted or
// failed run leaves the old file or none, never a partial one. Outputs that
// belong together (a trace and its certificate, a prior and its plot) are
// written with atomicfile.WriteGroup: all of them or none.

// CheckOutputs refuses, before any work, outputs (flag → path; empty
// paths are skipped) that would lose a file: an output that is one of the
// inputs ins (a file, or a trace file under an input directory, which the
// command reads), two outputs that are the same file, an output that is a
// directory or whose directory does not exist, and an output that exists
// already, unless force.
func CheckOutputs(ins []string, force bool, outs map[string]string) error {
	flags := make([]string, 0, len(outs))
	for flag := range outs {
		flags = append(flags, flag)
	}
	sort.Strings(flags) // the same error for the same mistake
	seen := map[string]string{}
	var inputs []string // the input files, listed once and only if needed
	listed := false
	for _, flag := range flags {
		p := outs[flag]
		if p == "" {
			continue
		}
		if err := CheckOut(flag, p); err != nil {
			return err
		}
		abs := AbsPath(p)
		for _, in := range ins {
			if in != "" && in != "-" && (AbsPath(in) == abs || sameFile(in, p)) {
				return usagef("%s %s is the input file; write elsewhere", flag, p)
			}
		}
		if other, ok := seen[abs]; ok {
			return usagef("%s and %s are the same file %s; give each its own", other, flag, p)
		}
		seen[abs] = flag
		st, err := os.Stat(p)
		if err != nil {
			continue // a new file
		}
		// An existing output under an input directory would be read as
		// input and then replaced.
		if !listed {
			inputs, listed = inputFiles(ins), true
		}
		for _, in := range inputs {
			if s, err := os.Stat(in); err == nil && os.SameFile(s, st) {
				return usagef("%s %s is one of the input files (read from %s); write elsewhere", flag, p, dirOf(ins, in))
			}
		}
		if !force {
			return usagef("%s %s exists; pass --force to replace it", flag, p)
		}
	}
	return nil
}

// inputFiles lists the trace files a command reading ins would read: the
// files named, and the trace files under the directories named.
func inputFiles(ins []string) []string {
	var out []string
	for _, in := range ins {
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			files, _, _ := trace.Files(in)
			out = append(out, files...)
		}
	}
	return out
}

// dirOf returns the input directory of ins that holds file.
func dirOf(ins []string, file string) string {
	for _, in := range ins {
		if rel, err := filepath.Rel(in, file); err == nil && filepath.IsLocal(rel) {
			return in
		}
	}
	return filepath.Dir(file)
}

// AbsPath is p made absolute, or cleaned when it cannot be.
func AbsPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// CheckFinite refuses to write traces that trace.CheckFinite rejects,
// naming the flag and the file.
func CheckFinite(flag, path string, traces []*trace.Trace) error {
	if err := trace.CheckFinite(traces); err != nil {
		return fmt.Errorf("%s %s: %w; nothing written", flag, path, err)
	}
	return nil
}

// CheckOut checks, before any work, that the output path of flag can be
// written: its directory exists and it is not a directory itself. Its
// errors, like CheckOutputs', are of the flag (--json: invalid_flag).
func CheckOut(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("%s %s is a directory; give a file name", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return usagef("%s %s: the directory %s does not exist (create it first)", flag, path, dir)
	case !st.IsDir():
		return usagef("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}

// RenderToBytes returns the bytes save writes to a file named like path
// (save picks the format by the extension), so that a figure can join an
// atomicfile.WriteGroup.
func RenderToBytes(path string, save func(tmp string) error) ([]byte, error) {
	dir, err := os.MkdirTemp("", "tracepriv-render-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "figure"+filepath.Ext(path))
	if err := save(tmp); err != nil {
		return nil, err
	}
	return os.ReadFile(tmp)
}
