package server

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server/api"
)

// TestOpenAPI checks the served OpenAPI document against the server: the
// operations it lists are exactly the routes registered, and the JSON the
// server returns for each operation (successes and errors) validates
// against the document's schema for that status code.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	r := e.do("GET", "/openapi.json", "", nil, nil)
	if r.status != 200 {
		t.Fatalf("%d", r.status)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Fatalf("openapi version %q", v)
	}
	paths := doc["paths"].(map[string]any)
	var documented, registered []string
	for p, ops := range paths {
		for m := range ops.(map[string]any) {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	for _, rt := range e.srv.routes {
		registered = append(registered, rt.Method+" "+rt.Path)
	}
	sort.Strings(documented)
	sort.Strings(registered)
	if strings.Join(documented, "\n") != strings.Join(registered, "\n") {
		t.Fatalf("documented operations\n%s\nregistered routes\n%s", strings.Join(documented, "\n"), strings.Join(registered, "\n"))
	}

	v := &validator{doc: doc}
	seen := map[string]bool{}
	check := func(method, pattern string, r response) {
		t.Helper()
		op, ok := paths[pattern].(map[string]any)[strings.ToLower(method)].(map[string]any)
		if !ok {
			t.Fatalf("%s %s not documented", method, pattern)
		}
		resp, ok := op["responses"].(map[string]any)[strconv.Itoa(r.status)].(map[string]any)
		if !ok {
			t.Errorf("%s %s: status %d not documented (%s)", method, pattern, r.status, truncate(string(r.body), 200))
			return
		}
		resp = v.resolve(resp)
		ct := strings.Split(r.header.Get("Content-Type"), ";")[0]
		media, ok := resp["content"].(map[string]any)[ct].(map[string]any)
		if !ok {
			t.Errorf("%s %s %d: content type %q not documented", method, pattern, r.status, ct)
			return
		}
		seen[fmt.Sprintf("%s %s %d", method, pattern, r.status)] = true
		if ct != "application/json" {
			return
		}
		var body any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Errorf("%s %s %d: %v", method, pattern, r.status, err)
			return
		}
		if err := v.validate(media["schema"].(map[string]any), body, "$"); err != nil {
			t.Errorf("%s %s %d: %v\n%s", method, pattern, r.status, err, truncate(string(r.body), 400))
		}
	}

	created := e.do("POST", "/v1/people", testAdmin, map[string]any{"id": "o", "epsilon_budget": 0.02,
		"geoind": map[string]any{"window": "24h"}, "cip": map[string]any{"epsilon_budget": 4}}, nil)
	check("POST", "/v1/people", created)
	tok := created.json(t)["token"].(string)
	check("POST", "/v1/people", e.do("POST", "/v1/people", testAdmin, map[string]any{"account": roomy, "id": "o", "epsilon_budget": 1.0}, nil))
	check("POST", "/v1/people", e.do("POST", "/v1/people", testAdmin, map[string]any{"account": roomy, "id": "o b", "epsilon_budget": 1.0}, nil))
	check("POST", "/v1/people", e.do("POST", "/v1/people", "", map[string]any{}, nil))
	e.do("POST", "/v1/people", testAdmin, map[string]any{"account": roomy, "id": "u", "epsilon_budget": 0.02,
		"geoind": map[string]any{"manager": "fixed-utility", "mechanism": "im"}}, nil)

	t0 := e.clock.Now()
	loc := "/v1/people/{id}/locate"
	key := newKey()
	check("POST", loc, e.locate("o", tok, beijing[0], beijing[1], t0, key))
	check("POST", loc, e.locate("o", tok, beijing[0], beijing[1], t0, key))
	check("POST", loc, e.locate("o", tok, beijing[0]+1e-3, beijing[1], t0, key))
	check("POST", loc, e.locate("o", "", beijing[0], beijing[1], t0, ""))
	check("POST", loc, e.locate("o", "nope", beijing[0], beijing[1], t0, ""))
	check("POST", loc, e.do("POST", "/v1/people/o/locate", tok, `{"lat": 1}`, map[string]string{"Idempotency-Key": "k1"}))
	check("POST", loc, e.do("POST", "/v1/people/o/locate", tok, `{}`, map[string]string{"Idempotency-Key": "k2", "Content-Type": "text/plain"}))
	for i := 0; ; i++ {
		r := e.locate("o", tok, beijing[0], beijing[1], t0.Add(time.Duration(i)*time.Second), "")
		check("POST", loc, r)
		if r.status == 429 || i > 200 {
			break
		}
	}
	san := "/v1/people/{id}/sanitize"
	check("POST", san, e.do("POST", "/v1/people/o/sanitize?format=plt&output=geojson", tok, sample.PLT, nil))
	check("POST", san, e.do("POST", "/v1/people/o/sanitize?format=plt", tok, sample.PLT, nil))
	check("POST", san, e.do("POST", "/v1/people/o/sanitize", tok, sample.PLT, nil))
	check("POST", san, e.do("POST", "/v1/people/o/sanitize?format=plt", tok, "junk", nil))
	chg := "/v1/people/{id}/charges"
	ckey := newKey()
	cbody := map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 100, "certificate_sha256": certDigest("openapi")}
	check("POST", chg, e.charge("o", tok, ckey, cbody))
	check("POST", chg, e.charge("o", tok, ckey, cbody))
	check("POST", chg, e.charge("o", tok, ckey, map[string]any{"mechanism": "cip", "epsilon": 0.2, "radius_m": 100, "certificate_sha256": certDigest("openapi")}))
	check("POST", chg, e.charge("o", tok, newKey(), map[string]any{"mechanism": "geoind", "epsilon": 0.01, "radius_m": 100, "grid_m": 1}))
	check("POST", chg, e.charge("o", tok, newKey(), map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 10, "certificate_sha256": certDigest("x")}))
	check("POST", chg, e.charge("o", tok, "", cbody))
	check("POST", chg, e.charge("o", "", newKey(), cbody))
	check("POST", chg, e.charge("o", tok, newKey(), map[string]any{"mechanism": "cip", "epsilon": 1e6, "radius_m": 100, "certificate_sha256": certDigest("x")}))
	led := "/v1/people/{id}/ledger"
	check("GET", led, e.do("GET", "/v1/people/o/ledger", tok, nil, nil))
	check("GET", led, e.do("GET", "/v1/people/o/ledger?limit=2", tok, nil, nil))
	check("GET", led, e.do("GET", "/v1/people/o/ledger", testAdmin, nil, nil))
	check("GET", led, e.do("GET", "/v1/people/zz/ledger", testAdmin, nil, nil))
	check("GET", led, e.do("GET", "/v1/people/o/ledger?limit=x", tok, nil, nil))
	check("GET", "/healthz", e.do("GET", "/healthz", "", nil, nil))
	check("GET", "/metrics", e.do("GET", "/metrics", "", nil, nil))
	check("GET", "/metrics", e.do("GET", "/metrics", tok, nil, nil))
	check("GET", "/metrics", e.do("GET", "/metrics", testAdmin, nil, nil))
	check("GET", "/openapi.json", r)
	tokp := "/v1/people/{id}/token"
	check("POST", tokp, e.do("POST", "/v1/people/u/token", testAdmin, nil, nil))
	check("POST", tokp, e.do("POST", "/v1/people/nobody/token", testAdmin, nil, nil))
	check("POST", tokp, e.do("POST", "/v1/people/u/token", tok, nil, nil))
	check("POST", tokp, e.do("POST", "/v1/people/u/token", "", nil, nil))

	for _, want := range []string{"POST /v1/people 201", "POST /v1/people 409", "POST /v1/people/{id}/locate 200",
		"POST /v1/people/{id}/locate 422", "POST /v1/people/{id}/locate 429", "POST /v1/people/{id}/sanitize 200",
		"POST /v1/people/{id}/sanitize 429", "GET /v1/people/{id}/ledger 200", "GET /v1/people/{id}/ledger 404",
		"GET /metrics 200", "GET /metrics 401", "GET /metrics 403", "POST /v1/people/{id}/token 200", "POST /v1/people/{id}/token 404",
		"POST /v1/people/{id}/charges 201", "POST /v1/people/{id}/charges 400", "POST /v1/people/{id}/charges 422", "POST /v1/people/{id}/charges 429"} {
		if !seen[want] {
			t.Errorf("not exercised: %s", want)
		}
	}
}

// validator checks JSON values against the subset of JSON Schema the
// document uses: $ref, allOf (merged), type, properties, required,
// additionalProperties: false, items, enum, minimum, maximum,
// exclusiveMinimum and format date-time.
type validator struct{ doc map[string]any }

func (v *validator) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		var cur any = v.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		s = cur.(map[string]any)
	}
}

// merged folds allOf into one object schema.
func (v *validator) merged(s map[string]any) map[string]any {
	s = v.resolve(s)
	all, ok := s["allOf"].([]any)
	if !ok {
		return s
	}
	out := map[string]any{"type": "object", "properties": map[string]any{}}
	var req []any
	add := func(p map[string]any) {
		for k, x := range p {
			switch k {
			case "properties":
				for n, ps := range x.(map[string]any) {
					out["properties"].(map[string]any)[n] = ps
				}
			case "required":
				req = append(req, x.([]any)...)
			case "additionalProperties":
				out[k] = x
			}
		}
	}
	for _, a := range all {
		add(v.merged(a.(map[string]any)))
	}
	add(s)
	out["required"] = req
	return out
}

func (v *validator) validate(s map[string]any, x any, at string) error {
	s = v.merged(s)
	if en, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range en {
			if e == x {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v not in %v", at, x, en)
		}
	}
	if alts, ok := s["type"].([]any); ok {
		var errs []string
		for _, a := range alts {
			alt := map[string]any{}
			for k, val := range s {
				alt[k] = val
			}
			alt["type"] = a
			err := v.validate(alt, x, at)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: no type of %v fits: %s", at, alts, strings.Join(errs, "; "))
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "object":
		m, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", at, x)
		}
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := m[r.(string)]; !ok {
					return fmt.Errorf("%s: required %q missing", at, r)
				}
			}
		}
		for k, val := range m {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap, ok := s["additionalProperties"].(bool); ok && !ap {
					return fmt.Errorf("%s: property %q not in the schema", at, k)
				}
				continue
			}
			if err := v.validate(ps, val, at+"."+k); err != nil {
				return err
			}
		}
	case "array":
		a, ok := x.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %T", at, x)
		}
		if it, ok := s["items"].(map[string]any); ok {
			for i, e := range a {
				if err := v.validate(it, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case "string":
		str, ok := x.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %T", at, x)
		}
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				return fmt.Errorf("%s: %q is not a date-time", at, str)
			}
		}
	case "number", "integer":
		f, ok := x.(float64)
		if !ok {
			return fmt.Errorf("%s: want a number, got %T", at, x)
		}
		if typ == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("%s: %v is not an integer", at, f)
		}
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v < minimum %v", at, f, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %v > maximum %v", at, f, m)
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && f <= m {
			return fmt.Errorf("%s: %v <= exclusive minimum %v", at, f, m)
		}
	case "boolean":
		if _, ok := x.(bool); !ok {
			return fmt.Errorf("%s: want a boolean, got %T", at, x)
		}
	}
	return nil
}

// TestOpenAPIErrorCodes: the document's error codes are exactly the Code
// constants of package api (read from its source, so a new code must be
// documented), and every code the status table maps to is one of them.
func TestOpenAPIErrorCodes(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	e := doc["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)
	codes := e["properties"].(map[string]any)["error"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"].([]any)
	documented := map[string]bool{}
	for _, c := range codes {
		documented[c.(string)] = true
	}
	declared := map[string]bool{}
	for _, f := range parseDir(t, "api") {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
					continue
				}
				for _, val := range vs.Values {
					c, err := strconv.Unquote(val.(*ast.BasicLit).Value)
					if err != nil {
						t.Fatal(err)
					}
					declared[c] = true
				}
			}
		}
	}
	if len(declared) < 10 {
		t.Fatalf("found %d Code constants in package api", len(declared))
	}
	for c := range declared {
		if !documented[c] {
			t.Errorf("error code %q is not in the document", c)
		}
	}
	for c := range documented {
		if !declared[c] {
			t.Errorf("the document's error code %q is no api.Code constant", c)
		}
	}
	for _, row := range statusTable {
		if !declared[string(row.code)] {
			t.Errorf("the status table maps %v to %q, no api.Code constant", row.err, row.code)
		}
	}
}

// TestOpenAPIMatchesAPITypes: each schema of the OpenAPI document and the
// Go type of package api for the same body name the same JSON fields, at
// every depth, and a response field is optional (omitempty) exactly where
// the schema does not require it; so a Go client decoding into package
// api's types misses nothing the server sends, and sends only what it
// reads. (TestOpenAPI checks the document against what the server sends.)
func TestOpenAPIMatchesAPITypes(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	v := &validator{doc: doc}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, c := range map[string]struct {
		typ     any
		request bool // the client may omit what the schema does not require
	}{
		"Error":         {api.ErrorResponse{}, false},
		"CreatePerson":  {api.CreatePersonRequest{}, true},
		"Person":        {api.Person{}, false},
		"PersonCreated": {api.CreatePersonResponse{}, false},
		"Locate":        {api.LocateRequest{}, true},
		"Located":       {api.LocateResponse{}, false},
		"Sanitized":     {api.SanitizeResponse{}, false},
		"Charge":        {api.Charge{}, false},
		"ChargeRequest": {api.ChargeRequest{}, true},
		"Charged":       {api.ChargeResponse{}, false},
		"Ledger":        {api.LedgerResponse{}, false},
		"Token":         {api.TokenResponse{}, false},
		"Health":        {api.HealthResponse{}, false},
		"LatLon":        {geo.Point{}, false},
	} {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			t.Errorf("no schema %s in the document", name)
			continue
		}
		matchSchema(t, v, s, reflect.TypeOf(c.typ), name, c.request)
	}
}

// matchSchema compares an object schema with a struct type's JSON fields,
// recursing into object, array and $ref properties.
func matchSchema(t *testing.T, v *validator, s map[string]any, typ reflect.Type, at string, request bool) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
	}
	s = v.merged(s)
	if typ.Kind() != reflect.Struct || typ == reflect.TypeOf(time.Time{}) {
		return
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		return // a free-form object (details, a certificate)
	}
	required := map[string]bool{}
	req, _ := s["required"].([]any)
	for _, r := range req {
		required[r.(string)] = true
	}
	fields := jsonFields(typ)
	for name, f := range fields {
		ps, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s.%s: field %s of %v is not in the schema", at, name, f.Name, typ)
			continue
		}
		omit := strings.Contains(f.Tag.Get("json"), ",omitempty")
		switch {
		case required[name] && omit:
			t.Errorf("%s.%s: required by the schema, omitempty in %v", at, name, typ)
		case !required[name] && !omit && !request:
			t.Errorf("%s.%s: optional in the schema, always sent by %v (add omitempty, or require it)", at, name, typ)
		}
		ps = v.resolve(ps)
		if it, ok := ps["items"].(map[string]any); ok {
			ps = v.resolve(it)
		}
		matchSchema(t, v, ps, f.Type, at+"."+name, request)
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s.%s: in the schema, not in %v", at, name, typ)
		}
	}
}

// jsonFields returns a struct type's fields by JSON name, embedded
// structs' fields promoted as encoding/json promotes them.
func jsonFields(typ reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && tag == "" {
			for n, g := range jsonFields(f.Type) {
				out[n] = g
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}
