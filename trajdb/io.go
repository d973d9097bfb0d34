package trajdb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/infile"
)

// SeqOptions configures ReadSequences and WriteSequences.
type SeqOptions struct {
	// Size is the alphabet size; zero means the largest symbol read + 1
	// (reading only).
	Size int
	// Base is the id of symbol 0 in the file (0 or, for MSNBC, 1).
	Base int
	// Persons writes "id: " before each sequence (writing only; reading
	// detects it).
	Persons bool
	// Name is the file name used in errors.
	Name string
}

// SeqError says which line and field of a sequence file is wrong.
type SeqError struct {
	Name  string // file name, if known
	Line  int
	Field int // 1-based field, 0 for the whole line
	Err   error
}

func (e *SeqError) Error() string {
	where := fmt.Sprintf("line %d", e.Line)
	if e.Name != "" {
		where = e.Name + ":" + strconv.Itoa(e.Line)
	}
	if e.Field > 0 {
		return fmt.Sprintf("%s: field %d: %v", where, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

func (e *SeqError) Unwrap() error { return e.Err }

// ReadSequences reads a symbolic sequence database from r. The format is
// text, one sequence per line, in the shape of the click-stream and transit
// data the exploration-tree papers evaluate on (MSNBC's msnbc.dat.gz,
// the STM metro and bus sequences):
//
//	# comment (a line starting with # or %)
//	3 4 4 1
//	2,7,7
//
// Symbols are non-negative integers separated by white space, commas or
// both. Blank lines and comment lines are skipped.
//
// Persons: by default each line is one person's one sequence (the papers'
// record-level unit). A file may instead give every line a person id
// before a colon, "alice: 3 4 1"; the lines of one id, wherever they are,
// are that person's sequences, in file order. A file must do one or the
// other on every line; ids are trimmed, non-empty and cannot hold ':'.
// Without ids, the person of a line is named after its line number.
//
// Alphabet: the symbols are 0..Size-1. SeqOptions.Size gives it (it should:
// the alphabet is public, and a DP release must not learn it from the data);
// if zero, Size is the largest symbol read + 1. SeqOptions.Base shifts
// 1-based files (MSNBC numbers its 17 categories from 1): symbol = id − Base.
// (MSNBC's raw file also lists the category names on a line of their own:
// comment it out with % before reading, or the reader stops there naming
// the line.)
func ReadSequences(r io.Reader, opt SeqOptions) (*DB, error) {
	db := &DB{Size: opt.Size}
	var index map[string]int
	// One person a line: persons gather in blocks, copied once at the end,
	// and their one-sequence slices share slabs (a million persons would
	// otherwise cost a million small allocations and log2(10^6) copies).
	var blocks [][]User
	var seqSlab [][]int
	largest, err := scanSequences(r, opt, func(id string, hasID bool, line int, seq []int) error {
		if !hasID {
			id = strconv.Itoa(line)
			if len(blocks) == 0 || len(blocks[len(blocks)-1]) == cap(blocks[len(blocks)-1]) {
				blocks = append(blocks, make([]User, 0, 1<<14))
				seqSlab = make([][]int, 0, 1<<14)
			}
			i := len(seqSlab)
			seqSlab = append(seqSlab, seq)
			b := &blocks[len(blocks)-1]
			*b = append(*b, User{ID: id, Seqs: seqSlab[i : i+1 : i+1]})
			return nil
		}
		if index == nil {
			index = map[string]int{}
		}
		i, ok := index[id]
		if !ok {
			i = len(db.Users)
			index[id] = i
			db.Users = append(db.Users, User{ID: id})
		}
		db.Users[i].Seqs = append(db.Users[i].Seqs, seq)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(blocks) > 0 {
		n := 0
		for _, b := range blocks {
			n += len(b)
		}
		db.Users = make([]User, 0, n)
		for _, b := range blocks {
			db.Users = append(db.Users, b...)
		}
	}
	if db.Size == 0 {
		if largest < 0 {
			return nil, fmt.Errorf("trajdb: %s: no sequences, and no alphabet size given", seqNameOr(opt.Name, "input"))
		}
		db.Size = largest + 1
	}
	return db, nil
}

// scanSequences reads a sequence file (ReadSequences' format) and calls fn
// with each line's person id (empty when the file has no ids: the person
// is then the line, whose number fn gets too) and sequence, in file order;
// seq is fn's to keep. It returns the largest symbol read (-1 if none).
func scanSequences(r io.Reader, opt SeqOptions, fn func(id string, hasID bool, line int, seq []int) error) (int, error) {
	if opt.Size < 0 || opt.Size > MaxCells {
		return -1, fmt.Errorf("trajdb: alphabet of %d symbols: want 1..%d (0 to infer)", opt.Size, MaxCells)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	withIDs := 0 // 1: lines carry ids, -1: they do not, 0: unknown yet
	largest := -1
	line := 0
	fail := func(field int, format string, a ...any) error {
		return &SeqError{Name: opt.Name, Line: line, Field: field, Err: fmt.Errorf(format, a...)}
	}
	// Symbols are parsed in place and copied into slabs shared by many
	// sequences (each capacity-limited, so appending to one never touches
	// another): a million short lines then cost a few allocations, not a
	// million.
	var slab, fields []int
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] == '#' || b[0] == '%' {
			continue
		}
		var id string
		body := b
		mode := -1
		if i := bytes.IndexByte(b, ':'); i >= 0 {
			mode = 1
			id = string(bytes.TrimSpace(b[:i]))
			body = b[i+1:]
			if id == "" {
				return largest, fail(0, "empty person id before ':'")
			}
		}
		if withIDs == 0 {
			withIDs = mode
		} else if withIDs != mode {
			return largest, fail(0, "some lines have a person id (\"id: symbols\") and others do not; use one convention for the whole file")
		}
		fields = fields[:0]
		for j := 0; j < len(body); {
			c := body[j]
			if c == ',' || c == ' ' || c == '\t' || c == '\r' {
				j++
				continue
			}
			k := j
			for k < len(body) && body[k] != ',' && body[k] != ' ' && body[k] != '\t' && body[k] != '\r' {
				k++
			}
			f := body[j:k]
			j = k
			v, ok := parseSymbol(f)
			if !ok {
				n, err := strconv.Atoi(string(f))
				if err != nil {
					return largest, fail(len(fields)+1, "%s is not an integer symbol id%s", infile.Excerpt(f), notText(f))
				}
				v = n
			}
			s := v - opt.Base
			switch {
			case s < 0:
				return largest, fail(len(fields)+1, "symbol id %d is below the first id %d", v, opt.Base)
			case opt.Size > 0 && s >= opt.Size:
				return largest, fail(len(fields)+1, "symbol id %d is outside the alphabet of %d symbols (ids %d..%d)", v, opt.Size, opt.Base, opt.Base+opt.Size-1)
			case s >= MaxCells:
				return largest, fail(len(fields)+1, "symbol id %d: alphabets are limited to %d symbols (renumber the symbols)", v, MaxCells)
			}
			fields = append(fields, s)
			largest = max(largest, s)
		}
		if len(fields) == 0 {
			return largest, fail(0, "no symbols")
		}
		if len(slab)+len(fields) > cap(slab) {
			slab = make([]int, 0, max(1<<16, len(fields)))
		}
		i := len(slab)
		slab = append(slab, fields...)
		if err := fn(id, mode == 1, line, slab[i:i+len(fields):i+len(fields)]); err != nil {
			return largest, err
		}
	}
	if err := sc.Err(); err != nil {
		line++
		return largest, fail(0, "%w", err)
	}
	return largest, nil
}

// parseSymbol parses a short run of decimal digits (no sign) without
// allocating; ok is false for anything else, which strconv then judges.
func parseSymbol(f []byte) (int, bool) {
	if len(f) == 0 || len(f) > 9 {
		return 0, false
	}
	v := 0
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func seqNameOr(name, def string) string {
	if name == "" {
		return def
	}
	return name
}

// readSeqList reads the sequences of the file at path, without persons
// (a release's SeqFile).
func readSeqList(path string, opt SeqOptions) ([][]int, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opt.Name = path
	var out [][]int
	if _, err := scanSequences(f, opt, func(_ string, _ bool, _ int, seq []int) error {
		out = append(out, seq)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadSequencesFile reads the symbolic sequence database at path, plain or
// gzip-compressed (told by content, not by name).
func ReadSequencesFile(path string, opt SeqOptions) (*DB, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opt.Name == "" {
		opt.Name = path
	}
	return ReadSequences(f, opt)
}

// WriteSequences writes db's sequences to w, one per line, symbols (plus
// opt.Base) separated by spaces, each line prefixed by its person's id
// and ": " if opt.Persons.
func WriteSequences(w io.Writer, db *DB, opt SeqOptions) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, u := range db.Users {
		if opt.Persons {
			id := strings.TrimSpace(u.ID)
			if id == "" || id != u.ID || strings.ContainsAny(id, ":\n\r") || id[0] == '#' || id[0] == '%' {
				return fmt.Errorf("trajdb: person id %q cannot be written (ids are non-empty, without surrounding spaces, ':' or line breaks, and do not start with # or %%)", u.ID)
			}
		}
		for j, s := range u.Seqs {
			if len(s) == 0 {
				return fmt.Errorf("trajdb: person %q: sequence %d is empty", u.ID, j+1)
			}
			b = b[:0]
			if opt.Persons {
				b = append(b, u.ID...)
				b = append(b, ": "...)
			}
			for k, x := range s {
				if x < 0 || x >= db.Size {
					return fmt.Errorf("trajdb: person %q: sequence %d: symbol %d outside the alphabet [0, %d)", u.ID, j+1, x, db.Size)
				}
				if k > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendInt(b, int64(x+opt.Base), 10)
			}
			b = append(b, '\n')
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeSeqs writes released sequences (no persons) as WriteSequences
// would write SeqDB(size, seqs), without a person per sequence.
func writeSeqs(w io.Writer, seqs [][]int, size, base int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for j, s := range seqs {
		if len(s) == 0 {
			return fmt.Errorf("trajdb: sequence %d is empty", j+1)
		}
		b = b[:0]
		for k, x := range s {
			if x < 0 || x >= size {
				return fmt.Errorf("trajdb: sequence %d: symbol %d outside the alphabet [0, %d)", j+1, x, size)
			}
			if k > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, int64(x+base), 10)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteSequencesFile atomically writes db to path (see WriteSequences).
func WriteSequencesFile(path string, db *DB, opt SeqOptions) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		if err := WriteSequences(w, db, opt); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

// SeqDB wraps released sequences (which have no persons) as a database
// over an alphabet of size symbols, one person per sequence, for
// WriteSequences and the metrics.
func SeqDB(size int, seqs [][]int) *DB {
	db := &DB{Size: size, Users: make([]User, len(seqs))}
	for i, s := range seqs {
		db.Users[i] = User{ID: strconv.Itoa(i + 1), Seqs: [][]int{s}}
	}
	return db
}

// notText adds a hint when a field is not text at all: the file is most
// likely binary (compressed in a format other than gzip, or not a
// sequence file).
func notText(f []byte) string {
	if utf8.Valid(f) && !bytes.ContainsFunc(f, func(r rune) bool { return r < ' ' && r != '\t' }) {
		return ""
	}
	return " (the file is binary, not text: give a sequence file, plain or gzip-compressed)"
}
