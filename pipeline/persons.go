package pipeline

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/trace"
)

// The person rule's last step on Beam. A corpus's persons found to hold
// the same uid (in two folders, a uid column, GeoLife's <uid>/Trajectory
// inside another folder) are one person (trace.JoinPersons), as the
// single-machine commands read them (trace.ReadPaths). A worker reading a
// file knows only that file's persons, and the join needs every file's:
// so each reading step also emits its file's trace.FilePersons (uids and
// merges, no location), one worker joins them all (joinFn; connected
// components need a global step, as groupFn's units do), and every step
// that groups by person renames through the join, a side input, before
// it groups. Otherwise a person split over two folders would be fitted,
// bounded or released as two, each at the full budget.

// personJoin is the renaming the join found: each person of a corpus
// that is one person with another, to the person they are released as
// (trace.JoinPersons); empty when no two persons are one.
type personJoin struct {
	Alias map[string]string
}

// of returns the person uid is released as.
func (j personJoin) of(uid string) string {
	if to, ok := j.Alias[uid]; ok {
		return to
	}
	return uid
}

func encFilePersons(v trace.FilePersons) ([]byte, error) { return gobEncode(v) }
func decFilePersons(b []byte) (trace.FilePersons, error) { return gobDecode[trace.FilePersons](b) }
func encJoin(v personJoin) ([]byte, error)               { return gobEncode(v) }
func decJoin(b []byte) (personJoin, error)               { return gobDecode[personJoin](b) }

func init() {
	beam.RegisterCoder(reflect.TypeFor[trace.FilePersons](), encFilePersons, decFilePersons)
	beam.RegisterCoder(reflect.TypeFor[personJoin](), encJoin, decJoin)
	register.Emitter1[trace.FilePersons]()
	register.Iter1[trace.FilePersons]()
	register.Emitter1[personJoin]()
	register.DoFn3x0[[]byte, func(*trace.FilePersons) bool, func(personJoin)](&joinFn{})
	register.DoFn3x0[trace.Trace, personJoin, func(trace.Trace)](&renameTraceFn{})
}

// joinFn joins the persons of every file read (trace.JoinPersons, which
// does not depend on the files' order) and emits the renaming, once. Only
// a corpus joins persons, as trace.ReadPaths joins only a corpus: an
// input that is not one is one person already.
type joinFn struct {
	Corpus bool
}

func (f *joinFn) ProcessElement(_ []byte, files func(*trace.FilePersons) bool, emit func(personJoin)) {
	var all []trace.FilePersons
	var fp trace.FilePersons
	for files(&fp) {
		all = append(all, fp)
		fp = trace.FilePersons{}
	}
	var j personJoin
	if f.Corpus {
		j.Alias, _ = trace.JoinPersons(all)
	}
	emit(j)
}

// joinPersons returns a PCollection<personJoin> of one element: the join
// of the persons of files, a PCollection<trace.FilePersons> of every file
// read, when corpus is set.
func joinPersons(s beam.Scope, files beam.PCollection, corpus bool) beam.PCollection {
	return beam.ParDo(s, &joinFn{Corpus: corpus}, beam.Impulse(s), beam.SideInput{Input: files})
}

// renameTraceFn gives a trace the person the join releases it as.
type renameTraceFn struct{}

func (renameTraceFn) ProcessElement(t trace.Trace, j personJoin, emit func(trace.Trace)) {
	t.UID = j.of(t.UID)
	emit(t)
}
