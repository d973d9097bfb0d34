package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/server/api"
)

// runErrJSON runs tracepriv as main does and decodes an error body from
// stdout; ok is false when stdout is not exactly one.
func runErrJSON(t *testing.T, args ...string) (status int, body cli.ErrorBody, stdout string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = runMain(args, &out, &errOut)
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil && status != 0 {
		t.Errorf("%v: stdout is not an error body (%v): %q; stderr %q", args, err, out.String(), errOut.String())
	}
	return status, body, out.String()
}

// leaves lists the path of every runnable command.
func leaves(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		p := append(slices.Clone(prefix), sub.Name())
		if sub.HasSubCommands() {
			out = append(out, leaves(sub, p)...)
		} else {
			out = append(out, p)
		}
	}
	return out
}

// TestJSONErrorEveryCommand: with --json, every command's error is one
// JSON object {"error": {"code", "message"}} on stdout and the status is
// 1 (before issue 32, the error went to stderr as text only).
func TestJSONErrorEveryCommand(t *testing.T) {
	cmds := leaves(newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}), nil)
	if len(cmds) < 20 {
		t.Fatalf("found %d commands: %v", len(cmds), cmds)
	}
	for _, c := range cmds {
		for _, args := range [][]string{
			append(slices.Clone(c), "--json", "--no-such-flag"),
			append([]string{"--json"}, append(slices.Clone(c), "--no-such-flag")...),
			append(slices.Clone(c), "--no-such-flag", "--json"), // --json after the bad flag, never parsed
		} {
			status, body, _ := runErrJSON(t, args...)
			if status != 1 || body.Error.Code != cli.CodeInvalidFlag || !strings.Contains(body.Error.Message, "no-such-flag") {
				t.Errorf("%v: status %d, %+v; want 1 and invalid_flag naming the flag", args, status, body)
			}
		}
	}
	// Without --json the error stays text on stderr, and stdout is empty.
	var out, errOut bytes.Buffer
	if s := runMain([]string{"inspect", "--no-such-flag"}, &out, &errOut); s != 1 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "tracepriv: ") {
		t.Errorf("text error: status %d, stdout %q, stderr %q", s, out.String(), errOut.String())
	}
}

// TestJSONErrorCodes: the code comes from the error's type: the command
// line, a missing file, bad input, a refusal and an exhausted budget.
func TestJSONErrorCodes(t *testing.T) {
	dir, plt, prior := samplePaths(t)
	junk := filepath.Join(dir, "junk.seq")
	os.WriteFile(junk, []byte("1 2 x\n"), 0o644)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("1 2 3\n"))
	w.Close()
	gzFile := filepath.Join(dir, "seqs.dat.gz")
	os.WriteFile(gzFile, gz.Bytes(), 0o644)
	// User mistakes that once came out as "internal" (session 45's probe).
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	notJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(notJSON, []byte("{bad"), 0o644)
	notSDPA := filepath.Join(dir, "bad.dat-s")
	os.WriteFile(notSDPA, []byte("bad\n"), 0o644)
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "")
	cip := []string{"--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}
	noUID := filepath.Join(dir, "corpus")
	os.MkdirAll(noUID, 0o755)
	os.WriteFile(filepath.Join(noUID, "a.plt"), mustRead(t, plt), 0o644)
	// Session 45's probe, continued: a started geoind session (for a
	// query earlier than its last), a sequence file and a trace file
	// named without a trace extension.
	state := filepath.Join(dir, "state.json")
	q := []string{"geoind", "query", "--state", state, "--no-ledger", "--key-dir", filepath.Join(dir, "keys"), "--lat", "39.98", "--lon", "116.32"}
	if s, _, out := runErrJSON(t, append(slices.Clone(q), "--origin", "39.9,116.4", "--time", "2008-10-24T02:10:00Z", "--json", "-q")...); s != 0 {
		t.Fatalf("starting a geoind session: status %d, %s", s, out)
	}
	stateBefore := mustRead(t, state)
	zeros := filepath.Join(dir, "zeros.csv")
	os.WriteFile(zeros, []byte("0,0\n0,0\n"), 0o644)
	seqs := filepath.Join(dir, "seqs.seq")
	os.WriteFile(seqs, []byte("1 2\n2 1\n"), 0o644)
	gsan := []string{"geoind", "sanitize", "--in", plt, "--out", filepath.Join(dir, "gs.csv"), "--origin", "39.9,116.4", "--no-ledger", "--max-error", "0"}
	for _, tc := range []struct {
		code api.Code
		args []string
	}{
		// --budget 0 once opened an account without any budget (and
		// released); 0 for --epsilon, --eta or --gamma of geoind was read
		// as the default, an --epsilon 0 released at ε*/r*.
		{cli.CodeInvalidFlag, append([]string{"sanitize", "--in", plt, "--out", filepath.Join(dir, "z.plt"), "--uid", "zed", "--ledger", filepath.Join(dir, "zl.json"), "--budget", "0"}, cip...)},
		{cli.CodeInvalidFlag, append(slices.Clone(gsan), "--epsilon", "0")},
		{cli.CodeInvalidFlag, append(slices.Clone(gsan), "--eta", "0")},
		{cli.CodeInvalidFlag, append(slices.Clone(gsan), "--epsilon", "0.01", "--radius", "50")}, // --epsilon overrode --radius
		// Once internal: a bad --lat, a query before the session's last,
		// bad kernel parameters, an attack's window, a figure's format,
		// an unknown trace format, an alphabet too large, a directory for
		// a file.
		{cli.CodeInvalidFlag, append(slices.Clone(q), "--lat", "NaN")},
		// --accuracy was ignored under fixed-rate, and its NaN broke the
		// new session's state file.
		{cli.CodeInvalidFlag, []string{"geoind", "query", "--state", filepath.Join(dir, "s2.json"), "--no-ledger", "--key-dir", filepath.Join(dir, "keys"), "--lat", "39.98", "--lon", "116.32", "--origin", "39.9,116.4", "--accuracy", "NaN"}},
		{cli.CodeInvalidFlag, append(slices.Clone(q), "--time", "2008-10-24T02:00:00Z")},
		{cli.CodeInvalidFlag, append(slices.Clone(q), "--time", "1e308")}, // once wrapped round to 1677
		{cli.CodeInvalidFlag, []string{"cip", "design", "--kernel", "rbf", "--lengthscale", "0", "--n", "5", "--secret", "2", "--budget", "1"}},
		{cli.CodeInvalidFlag, []string{"attack", "--in", plt, "--truth", plt, "--window", "5"}},
		{cli.CodeInvalidFlag, []string{"attack", "--in", plt, "--truth", plt, "--dense-window", "-5"}},
		{cli.CodeInvalidFlag, []string{"attack", "--in", plt, "--truth", plt, "--plot", filepath.Join(dir, "a.txt")}},
		{cli.CodeInvalidFlag, []string{"cip", "envelope", "--kernel", "rbf", "--lengthscale-min", "10", "--lengthscale-max", "20", "--plot", filepath.Join(dir, "e.txt")}},
		{cli.CodeInvalidFlag, []string{"inspect", plt, "--from", "xyz"}},
		{cli.CodeInvalidFlag, []string{"convert", "--in", plt, "--out", filepath.Join(dir, "c.xyz")}},
		{cli.CodeInvalidFlag, []string{"release", "--in", seqs, "--out", filepath.Join(dir, "r3"), "--mechanism", "ngram", "--epsilon", "1", "--alphabet", "2000000"}},
		// Bounds whose noise has no end (--max-len 1e11 ran out of
		// memory): here just over the limit, a slow run on the old code.
		{cli.CodeInvalidFlag, []string{"release", "--in", seqs, "--out", filepath.Join(dir, "r4"), "--mechanism", "ngram", "--epsilon", "1", "--alphabet", "3", "--max-len", "100", "--max-seqs", "501"}},
		{cli.CodeInvalidFlag, []string{"release", "--in", noUID, "--out", filepath.Join(dir, "r5"), "--mechanism", "prefix", "--epsilon", "1", "--cell-m", "1e-300", "--bbox", "39.75,116.15,40.10,116.60"}},
		// A dense prior of 1e11 points (once out of memory at once).
		{cli.CodeInvalidFlag, []string{"cip", "loss", "--kernel", "rbf", "--lengthscale", "2", "--n", "99999999999", "--secret", "1", "--iid", "1", "--lambda", "2", "--radius", "1"}},
		{cli.CodeIO, []string{"sdp", "solve", filepath.Join(dir, "empty")}},
		{cli.CodeInvalidInput, []string{"bdp", "calibrate", "--model", "gaussian", "--epsilon", "1", "--cov", zeros}},
		{cli.CodeInvalidFlag, []string{"risk", "calibrate", "--mechanism", "laplace", "--risk", "0.9999999", "--m", "2"}},
		// No noise: an infinite loss, which JSON cannot carry (once no
		// JSON at all on stdout).
		{cli.CodeRefused, []string{"cip", "loss", "--kernel", "rbf", "--lengthscale", "2", "--n", "2", "--secret", "1", "--noise", zeros, "--lambda", "2", "--radius", "1"}},
		{cli.CodeInvalidFlag, []string{"bogus-command"}},
		{cli.CodeInvalidFlag, []string{"release"}}, // required flags
		{cli.CodeInvalidFlag, []string{"inspect"}}, // arguments
		{cli.CodeInvalidFlag, []string{"release", "--in", junk, "--out", filepath.Join(dir, "r0"), "--mechanism", "ngram", "--epsilon", "-1", "--alphabet", "3"}},
		{cli.CodeInvalidFlag, []string{"sanitize", "--in", plt, "--out", filepath.Join(dir, "o.plt"), "--epsilon", "1", "--lambda", "2", "--radius", "100"}}, // no --prior
		{cli.CodeInvalidFlag, []string{"sanitize", "--in", plt, "--out", filepath.Join(dir, "o.plt"), "--prior", prior, "--epsilon", "-1", "--lambda", "2", "--radius", "100", "--no-ledger"}},
		{cli.CodeIO, []string{"inspect", filepath.Join(dir, "missing.plt")}},
		{cli.CodeInvalidInput, []string{"release", "--in", junk, "--out", filepath.Join(dir, "r1"), "--mechanism", "ngram", "--epsilon", "1", "--alphabet", "3"}},
		// A gzip sequence file is read (symbol 3 is outside an alphabet of 3).
		{cli.CodeInvalidInput, []string{"release", "--in", gzFile, "--out", filepath.Join(dir, "r2"), "--mechanism", "ngram", "--epsilon", "1", "--alphabet", "3"}},
		{cli.CodeRefused, []string{"sanitize", "--in", filepath.Join(dir, "corpus"), "--corpus", "--out", filepath.Join(dir, "co"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--no-ledger"}},
		{cli.CodeInvalidInput, []string{"inspect", filepath.Join(dir, "empty")}}, // no trace files
		{cli.CodeInvalidFlag, append([]string{"sanitize", "--in", plt, "--out", filepath.Join(dir, "nodir", "o.plt"), "--seed", "1"}, cip...)},
		{cli.CodeIO, append([]string{"sanitize", "--in", plt, "--out", filepath.Join(dir, "l.plt"), "--ledger", filepath.Join(dir, "nodir", "l.json")}, cip...)},
		{cli.CodeInvalidInput, []string{"attack", "--in", plt, "--truth", plt}}, // no certificate beside --in
		{cli.CodeInvalidFlag, []string{"geoind", "sanitize", "--in", plt, "--out", filepath.Join(dir, "g.csv"), "--origin", "39.9"}},
		{cli.CodeRefused, []string{"geoind", "sanitize", "--in", plt, "--out", filepath.Join(dir, "g.csv"), "--origin", "39.9,116.4", "--max-error", "1"}},
		{cli.CodeInvalidInput, []string{"geoind", "query", "--state", notJSON, "--uid", "a", "--origin", "39.9,116.4", "--epsilon", "0.01", "--lat", "39.98", "--lon", "116.32"}},
		{cli.CodeIO, []string{"account", "ledger", filepath.Join(dir, "missing.yaml")}},
		{cli.CodeInvalidInput, []string{"account", "ledger", notJSON}},
		{cli.CodeInvalidInput, []string{"sdp", "solve", notSDPA}},
		{cli.CodeInvalidFlag, []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "svc"), "--check"}}, // no admin token
		{cli.CodeInvalidFlag, []string{"fit", "--in", plt, "--out", filepath.Join(dir, "f.json"), "--min-duration", "-1s"}},
		{cli.CodeBudgetExhausted, []string{"sanitize", "--in", plt, "--out", filepath.Join(dir, "b.plt"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100",
			"--uid", "alice", "--ledger", filepath.Join(dir, "ledger.json"), "--budget", "0.5"}},
	} {
		args := append(tc.args, "--json", "-q")
		status, body, _ := runErrJSON(t, args...)
		if status != 1 || body.Error.Code != tc.code || body.Error.Message == "" {
			t.Errorf("%v: status %d, %+v; want code %s", tc.args, status, body, tc.code)
		}
		if !slices.Contains(cli.Codes, body.Error.Code) {
			t.Errorf("%v: code %q is not one of cli.Codes", tc.args, body.Error.Code)
		}
	}
	// A TLS pair that is not PEM is bad input (it was internal); a
	// missing one is a file missing.
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "jsonerror-admin-token-0123456789abcdefXYZ")
	badPEM := filepath.Join(dir, "junk.pem")
	os.WriteFile(badPEM, []byte("junk\n"), 0o644)
	for code, pem := range map[api.Code]string{cli.CodeInvalidInput: badPEM, cli.CodeIO: filepath.Join(dir, "missing.pem")} {
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "svc"), "--tls-cert", pem, "--tls-key", pem, "--check", "--json", "-q"}
		if status, body, _ := runErrJSON(t, args...); status != 1 || body.Error.Code != code {
			t.Errorf("%v: status %d, %+v; want code %s", args, status, body, code)
		}
	}
	// Refused runs leave nothing behind: no release, no ledger, the
	// session's state as it was.
	for _, f := range []string{"z.plt", "zl.json", "gs.csv", "r3", "r4", "r5", "s2.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a refused run left %s", f)
		}
	}
	if !bytes.Equal(mustRead(t, state), stateBefore) {
		t.Error("a refused query changed the session's state")
	}
}
