package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// slowExamples are example lines too slow for go test (minutes), or heavy
// runs whose command the suite checks elsewhere once (chapter 3:
// TestReproChapter3CLI, and repro's TestReproduceChapter3; the
// n-gram control's audit: trajdb's TestAuditFlagsNegativeControls; the
// weakened n-gram tree's support audit: TestAuditNoiseFactorCLI, with
// fewer draws; the attack of the whole released sample corpus, 12 CPU-s
// of this test's 36: TestAttackCorpusRelease attacks a released corpus
// directory with -short; repro trajdb on a population of 200, 7 s of its
// 30: TestReproTrajDBCLI runs --population 20; cip loss of every secret of
// the 268-point sample trace with 400 i.i.d. noise points, 4.4 s of its
// 23: TestCIPTraceReport runs cip loss --trace --iid 1 --all-secrets with
// -short, and cip's tests the loss itself); they run from the CLI like
// any other.
var slowExamples = []string{"repro cip --figure all", "repro cip-compare", "repro thesis --chapter 3", "audit support --mechanism ngram-tenth-noise", "audit support --mechanism ngram --noise-factor",
	"attack --in sample-released --truth internal/sample", "--population 200", "--iid 400 --all-secrets"}

// commands returns every command of the tree under root, root first.
func commands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		out = append(out, commands(c)...)
	}
	return out
}

// TestEveryCommandHasExamples walks the command tree: every command shows
// an Examples section in --help, and no help text names a path of the
// development checkout or a document that is not in the repository.
func TestEveryCommandHasExamples(t *testing.T) {
	n := 0
	for _, c := range commands(newRootCmd(io.Discard, io.Discard)) {
		path := c.CommandPath()
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Examples section", path)
			continue
		}
		args := append(strings.Fields(path)[1:], "--help")
		stdout, _, err := run(t, args...)
		if err != nil || !strings.Contains(stdout, "\nExamples:\n") {
			t.Errorf("%s --help: %v, no Examples section:\n%s", path, err, stdout)
		}
		for _, bad := range []string{"../", "shared/data", "shared/design"} {
			if strings.Contains(stdout, bad) {
				t.Errorf("%s --help mentions %q, a path of the development checkout", path, bad)
			}
		}
		// Documents the help cites must be in the repository.
		for _, f := range strings.Fields(stdout) {
			f = strings.Trim(f, "(),.;:`'\"")
			if strings.HasSuffix(f, ".md") {
				if _, err := os.Stat(filepath.Join("..", "..", f)); err != nil {
					t.Errorf("%s --help cites %s, which is not in the repository", path, f)
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("walked only %d commands", n)
	}
}

// TestExamplesRun runs every example line of every checked command, in
// order, in a directory laid out like a fresh clone (the bundled sample
// corpus and prior, the SDPA example) after "tracepriv demo --out demo-output", as the
// examples assume. Comment lines (#) are not run.
func TestExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example of the CLI")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	corpus, err := filepath.Glob(filepath.Join(repo, "internal", "sample", "synth-*", "*.plt"))
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no bundled sample corpus: %v", err)
	}
	files := []string{"internal/sample/prior.json", "sdp/testdata/example1.dat-s"}
	for _, c := range corpus {
		rel, _ := filepath.Rel(repo, c)
		files = append(files, rel)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config")) // geoind query's key directory
	// serve reads its admin token from the environment, as its examples say.
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "examples-admin-token-0123456789abcdef")
	demoOut, _, err := run(t, "demo", "--out", "demo-output", "--seed", "1")
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	// The demo's headline said "every place" where its certificate covers
	// places only against members at least as long as the stay.
	if strings.Contains(demoOut, "every place") || !strings.Contains(demoOut, "places ≤ lengthscale (longer: ε ≤") {
		t.Errorf("demo's headline does not say which places its epsilon covers:\n%s", demoOut)
	}
	used := map[string]int{}
	for _, c := range commands(newRootCmd(io.Discard, io.Discard)) {
		for _, line := range exampleLines(c.Example) {
			if containsAny(line, slowExamples) {
				continue
			}
			stdin, args, err := splitExample(line)
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			args = shrink(line, args, used)
			var stdout, stderr bytes.Buffer
			root := newRootCmd(&stdout, &stderr)
			root.SetIn(strings.NewReader(stdin))
			root.SetArgs(args)
			start := time.Now()
			err = root.Execute()
			t.Logf("%5.1f s  %s", time.Since(start).Seconds(), line)
			if err != nil {
				t.Errorf("%s: example %q fails: %v\n%s", c.CommandPath(), line, err, stderr.String())
			}
		}
	}
	// A shrunk line that no longer matches one example would hide nothing,
	// but its comment would name a check that covers nothing.
	for _, s := range shrunkExamples {
		if used[s.line] != 1 {
			t.Errorf("shrunkExamples entry %q matches %d example lines, want 1", s.line, used[s.line])
		}
	}
}

// shrunkExamples are example lines the test runs with flags appended that
// make them cheap (pflag keeps a repeated flag's last value): the line's
// parsing and wiring are checked here, and its full run is checked once,
// at size, by the test named beside it.
var shrunkExamples = []struct{ line, more string }{
	// trajdb's TestAuditFalseAlarms audits the prefix tree at the default
	// budget; TestAuditSupportControlsCLI checks the CLI's verdict.
	{"audit support --mechanism prefix --epsilon 2", "--confirm-neighbours -1 --draws 50 --neighbour-draws 10"},
	// trajdb's TestAuditFlagsNegativeControls flags this control at the
	// default budget at epsilon 1 (the example's) and 4.
	{"audit support --mechanism flawed-present-only-prefix", "--confirm-neighbours -1 --draws 50 --neighbour-draws 10"},
	// TestAuditNoiseFactorCLI runs this audit, and flags it, at 804 draws.
	{"audit noise --mechanism cip --noise-factor 0.7", "--draws 804"},
	// TestReproTrajDBCLI runs repro trajdb with one rep; the reps only
	// repeat the same release and metrics.
	{"repro trajdb --in internal/sample --cell-m 10000", "--reps 1"},
}

// shrink returns args with the flags shrunkExamples appends to line, and
// counts the match in used.
func shrink(line string, args []string, used map[string]int) []string {
	for _, s := range shrunkExamples {
		if strings.Contains(line, s.line) {
			used[s.line]++
			return append(args, strings.Fields(s.more)...)
		}
	}
	return args
}

func containsAny(line string, list []string) bool {
	for _, s := range list {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// exampleLines returns the commands of an Examples section: continuation
// lines joined, comments and blank lines dropped.
func exampleLines(ex string) []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(ex, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		l = cur + l
		cur = ""
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// splitExample splits a shell line "[echo 'STDIN' |] tracepriv ARGS...
// [# comment]" into the input and the arguments after "tracepriv",
// honouring single and double quotes.
func splitExample(line string) (stdin string, args []string, err error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			goto done
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
done:
	if quote != 0 {
		return "", nil, errUnbalanced
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) > 3 && words[0] == "echo" && words[2] == "|" {
		stdin, words = words[1]+"\n", words[3:]
	}
	if len(words) == 0 || words[0] != "tracepriv" {
		return "", nil, errNotTracepriv
	}
	return stdin, words[1:], nil
}

type exampleError string

func (e exampleError) Error() string { return string(e) }

const (
	errUnbalanced   = exampleError("unbalanced quotes")
	errNotTracepriv = exampleError(`not a "tracepriv ..." command (write other commands as # comments)`)
)
