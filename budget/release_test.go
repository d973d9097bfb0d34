package budget

import (
	"strings"
	"testing"
)

// A release key names the release by a hash of its parts: the same parts
// give the same key (a resumed run finds its charges), other parts another
// key, and no part (a local path) appears in it.
func TestReleaseKey(t *testing.T) {
	a := ReleaseKey("sanitize corpus", "/home/alice/out", "prior")
	if a != ReleaseKey("sanitize corpus", "/home/alice/out", "prior") {
		t.Error("the same parts gave two keys")
	}
	for _, b := range []string{
		ReleaseKey("sanitize corpus", "/home/alice/out", "prior2"),
		ReleaseKey("sanitize corpus", "/home/alice/ou", "tprior"), // parts are separated
		ReleaseKey("sanitize file", "/home/alice/out", "prior"),
	} {
		if a == b {
			t.Errorf("other parts gave the same key %s", a)
		}
	}
	if strings.Contains(a, "alice") || !strings.HasPrefix(a, "sanitize corpus ") || len(a) != len("sanitize corpus ")+16 {
		t.Errorf("key %q", a)
	}
	if Nonce() == Nonce() {
		t.Error("two nonces are equal")
	}
	r := NewRequest(CIP, "tracepriv sanitize", "out.plt", 3, true)
	if r.Release == NewRequest(CIP, "tracepriv sanitize", "out.plt", 3, true).Release || r.Budget != 3 || !r.RaiseBudget || r.Epsilon == nil {
		t.Errorf("NewRequest: %+v", r)
	}
}
