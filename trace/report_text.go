package trace

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxShown is how many examples WriteText shows of each kind.
const maxShown = 3

// WriteText writes, for people, what the readers skipped or merged,
// counted by reason with the first few file:line examples and one error
// in full, the files taken as a person named after the file, the uids
// merged into another person by the person rule, and the files that could
// not be read. It writes nothing when there is nothing to say. Each
// statement starts a line; its details follow on indented lines.
func (r *Report) WriteText(w io.Writer) error {
	if n := r.SkippedRows(); n > 0 || r.Truncated {
		fmt.Fprintf(w, "input: %d of %d rows skipped or merged (see docs/input.md; --strict stops at the first bad row instead):\n",
			n, n+r.Read)
		by := r.ByReason()
		for _, k := range Reasons {
			ex := r.Examples(k, maxShown)
			if by[k] == 0 && len(ex) == 0 {
				continue
			}
			var at []string
			for _, p := range ex {
				at = append(at, p.location())
			}
			more := ""
			if by[k] > len(at) {
				more = ", ..."
			}
			what := k.Describe()
			if k == ReasonTruncated {
				what += "; files cut between rows lose none"
			}
			fmt.Fprintf(w, "  %d %s (%s): %s%s\n", by[k], k, what, strings.Join(at, ", "), more)
		}
		if ex := r.Examples(r.firstReason(by), 1); len(ex) > 0 {
			fmt.Fprintf(w, "  e.g. %v\n", ex[0])
		}
	}
	writeFilePersons(w, r.UIDFromFile)
	WriteMerges(w, r.Merged)
	if len(r.SkippedFiles) > 0 {
		fmt.Fprintf(w, "input: %d of %d files could not be read and were skipped:\n", len(r.SkippedFiles), r.Files)
		for i, f := range r.SkippedFiles {
			if i == maxShown {
				fmt.Fprintf(w, "  ... and %d more (see --json)\n", len(r.SkippedFiles)-maxShown)
				break
			}
			fmt.Fprintf(w, "  %v\n", f.Err)
		}
	}
	return nil
}

// writeFilePersons warns that files without a user id were each taken
// as the person named after the file, and says how to name the person.
func writeFilePersons(w io.Writer, files []FilePerson) {
	if len(files) == 0 {
		return
	}
	var ex []string
	for i, f := range files {
		if i == maxShown {
			ex = append(ex, fmt.Sprintf("and %d more", len(files)-maxShown))
			break
		}
		ex = append(ex, fmt.Sprintf("%s is person %q", f.File, f.UID))
	}
	what := "1 file has no user id, in its data or from its folder, so it is taken as one person named after the file"
	if len(files) > 1 {
		what = fmt.Sprintf("%d files have no user id, in their data or from their folder, so each is taken as one person named after the file", len(files))
	}
	fmt.Fprintf(w, "input: %s: %s.\n", what, strings.Join(ex, ", "))
	fmt.Fprintln(w, "  To name the person, give --uid ID (one person for every file read), add a uid column (CSV), or put each person's files in a folder named after them and give the folder above (see docs/input.md).")
}

// WriteMerges warns, for people, that uids of the data were released as
// part of another person by the person rule (PersonRule), and says how
// to release each. It writes nothing for no merges.
func WriteMerges(w io.Writer, merged []Merge) error {
	var joined []Merge
	merged = slices.DeleteFunc(slices.Clone(merged), func(m Merge) bool {
		if m.Joined {
			joined = append(joined, m)
		}
		return m.Joined
	})
	if err := writeJoins(w, joined); err != nil || len(merged) == 0 {
		return err
	}
	var ex []string
	for i, m := range merged {
		if i == maxShown {
			ex = append(ex, fmt.Sprintf("and %d more", len(merged)-maxShown))
			break
		}
		ex = append(ex, fmt.Sprintf("uid %q of %s is person %q", m.DataUID, m.File, m.Person))
	}
	fmt.Fprintf(w, "input: %d uids of the data are released as part of another person, by the person rule: %s.\n", len(merged), strings.Join(ex, ", "))
	_, err := fmt.Fprintln(w, "  An input is one person unless declared a corpus, and a corpus's child folder is one person whatever its data says: merging costs accuracy, never privacy. To release each uid of a file as a person, give --corpus (see docs/input.md).")
	return err
}

// NothingRead says why reading paths gave no trace (r is the read's
// report): what was skipped, with an example, or that the files hold
// none.
func NothingRead(paths []string, r *Report) error {
	msg := strings.Join(paths, ", ") + ": no traces found"
	if n := r.SkippedRows(); n > 0 {
		msg += fmt.Sprintf("; all %d rows read were skipped", n)
		if ex := r.Examples(r.firstReason(r.ByReason()), 1); len(ex) > 0 {
			msg += fmt.Sprintf(", e.g. %v", ex[0])
		}
		msg += " (see docs/input.md)"
	}
	if n := len(r.SkippedFiles); n > 0 {
		msg += fmt.Sprintf("; %d of %d files could not be read, e.g. %v", n, r.Files, r.SkippedFiles[0].Err)
	}
	if r.SkippedRows() == 0 && len(r.SkippedFiles) == 0 {
		msg += " (the files hold no fix)"
	}
	return errors.New(msg)
}

// StrictHint adds to the error that stopped a strict read of files
// files how a lenient read would have gone on: a row like the one
// that stopped it repaired or skipped and reported, an unreadable file
// among several skipped and listed.
func StrictHint(err error, files int) error {
	var pe *ParseError
	switch {
	case !errors.As(err, &pe):
		return err
	case pe.Skippable():
		verb := "skipped"
		if pe.Reason() == ReasonDuplicate {
			verb = "merged"
		}
		return fmt.Errorf("%w\n(--strict stops at the first bad row; without it, rows like this one are %s and reported; see docs/input.md)", err, verb)
	case files > 1:
		return fmt.Errorf("%w\n(--strict stops at the first unreadable file; without it, such files are skipped and listed; see docs/input.md)", err)
	}
	return err
}

// firstReason is the first reason, in report order, with a count or a
// cut; a skip is a better example than a merge.
func (r *Report) firstReason(by map[Reason]int) Reason {
	for _, k := range Reasons[1:] {
		if by[k] > 0 || k == ReasonTruncated && r.Truncated {
			return k
		}
	}
	return ReasonDuplicate
}

// location is FILE:LINE of a problem.
func (e *ParseError) location() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return e.File
}

// writeJoins says which persons of a corpus were found to be one person
// (JoinPersons), each pair once.
func writeJoins(w io.Writer, joined []Merge) error {
	var ex []string
	for _, m := range joined {
		e := fmt.Sprintf("%q is released as %q", m.DataUID, m.Person)
		if !slices.Contains(ex, e) {
			ex = append(ex, e)
		}
	}
	if len(ex) == 0 {
		return nil
	}
	if len(ex) > maxShown {
		ex = append(ex[:maxShown], fmt.Sprintf("and %d more", len(ex)-maxShown))
	}
	_, err := fmt.Fprintf(w, "input: persons of the corpus hold the same uid (in two folders, a uid column or GeoLife's <uid>/Trajectory), so each group is one person: %s (see docs/input.md).\n", strings.Join(ex, ", "))
	return err
}
