package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// jvalue is a decoded JSON value that remembers where it started, so that
// GeoJSON errors can name a line. encoding/json's Decoder.Token walks the
// document; values are kept in order, duplicate keys resolve to the last.
type jvalue struct {
	off  int
	kind jkind
	str  string // string contents, or number text
	b    bool
	arr  []*jvalue
	keys []string
	vals []*jvalue
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// get returns the member key of an object, nil if absent or not an object.
func (v *jvalue) get(key string) *jvalue {
	if v == nil || v.kind != jObject {
		return nil
	}
	for i := len(v.keys) - 1; i >= 0; i-- {
		if v.keys[i] == key {
			return v.vals[i]
		}
	}
	return nil
}

// isNull reports whether v is absent or null.
func (v *jvalue) isNull() bool { return v == nil || v.kind == jNull }

// text returns a scalar as text and anything else as compact JSON.
func (v *jvalue) text() string {
	switch v.kind {
	case jNull:
		return ""
	case jBool:
		return strconv.FormatBool(v.b)
	case jNumber, jString:
		return v.str
	}
	var b bytes.Buffer
	v.appendJSON(&b)
	return b.String()
}

func (v *jvalue) appendJSON(b *bytes.Buffer) {
	switch v.kind {
	case jNull:
		b.WriteString("null")
	case jBool:
		b.WriteString(strconv.FormatBool(v.b))
	case jNumber:
		b.WriteString(v.str)
	case jString:
		s, _ := json.Marshal(v.str)
		b.Write(s)
	case jArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.appendJSON(b)
		}
		b.WriteByte(']')
	case jObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			s, _ := json.Marshal(k)
			b.Write(s)
			b.WriteByte(':')
			v.vals[i].appendJSON(b)
		}
		b.WriteByte('}')
	}
}

// jsonError is a syntax error at a byte offset.
type jsonError struct {
	off int
	err error
}

func (e *jsonError) Error() string { return e.err.Error() }

const maxJSONDepth = 256

type jparser struct {
	buf []byte
	dec *json.Decoder
}

// parseJSON decodes one JSON document with positions.
func parseJSON(buf []byte) (*jvalue, error) {
	p := &jparser{buf: buf, dec: json.NewDecoder(bytes.NewReader(buf))}
	p.dec.UseNumber()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &jsonError{p.next(), fmt.Errorf("%w: data after the end of the JSON document", ErrMalformed)}
	}
	return v, nil
}

// next returns the offset of the next token.
func (p *jparser) next() int {
	i := int(p.dec.InputOffset())
	for i < len(p.buf) {
		switch p.buf[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

func (p *jparser) token() (json.Token, int, error) {
	off := p.next()
	tok, err := p.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			if int(se.Offset) >= len(p.buf) {
				return nil, len(p.buf), fmt.Errorf("%w: JSON document ends early (%v)", ErrTruncated, se)
			}
			return nil, int(se.Offset), fmt.Errorf("%w: %v", ErrMalformed, se)
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, len(p.buf), fmt.Errorf("%w: JSON document ends early", ErrTruncated)
		}
		return nil, off, err
	}
	return tok, off, nil
}

func (p *jparser) value(depth int) (*jvalue, error) {
	tok, off, err := p.token()
	if err != nil {
		return nil, &jsonError{off, err}
	}
	if depth > maxJSONDepth {
		return nil, &jsonError{off, fmt.Errorf("%w: JSON nested deeper than %d", ErrMalformed, maxJSONDepth)}
	}
	v := &jvalue{off: off}
	switch t := tok.(type) {
	case nil:
		v.kind = jNull
	case bool:
		v.kind, v.b = jBool, t
	case json.Number:
		v.kind, v.str = jNumber, string(t)
	case string:
		v.kind, v.str = jString, t
	case json.Delim:
		switch t {
		case '[':
			v.kind = jArray
			for p.dec.More() {
				e, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
		case '{':
			v.kind = jObject
			for p.dec.More() {
				ktok, koff, err := p.token()
				if err != nil {
					return nil, &jsonError{koff, err}
				}
				k, _ := ktok.(string)
				e, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.keys, v.vals = append(v.keys, k), append(v.vals, e)
			}
		default:
			return nil, &jsonError{off, fmt.Errorf("%w: unexpected %q", ErrMalformed, t)}
		}
		if _, off, err := p.token(); err != nil { // the closing delimiter
			return nil, &jsonError{off, err}
		}
	}
	return v, nil
}

// lineIndex maps byte offsets to 1-based lines.
type lineIndex []int // offsets of '\n'

func newLineIndex(buf []byte) lineIndex {
	var nl lineIndex
	for i, c := range buf {
		if c == '\n' {
			nl = append(nl, i)
		}
	}
	return nl
}

func (l lineIndex) line(off int) int { return sort.SearchInts(l, off) + 1 }
