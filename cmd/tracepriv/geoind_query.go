package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
)

// geoindQueryCmd is "tracepriv geoind query": one location through a
// persistent, sealed session (geoind.StateFile), charged once per session
// in the person's ledger.
type geoindQueryCmd struct {
	env         *cli.Env
	g           cli.GeoIndFlags
	state, tstr string
	keyDir, uid string
	newBudget   bool
	led         cli.LedgerFlags
	lat, lon    float64
}

func newGeoindQueryCmd(env *cli.Env) *cobra.Command {
	c := &geoindQueryCmd{env: env}
	long, example := helpMeaning("geoind query", geoind.Meaning(defaultEpsPerMetre))
	cmd := &cobra.Command{
		Use:     "query --state FILE --lat LAT --lon LON [--time T]",
		Short:   "Report one location through a persistent, sealed session",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&c.state, "state", "", "session state file (JSON), created if missing")
	f.Float64Var(&c.lat, "lat", 0, "latitude of the secret location")
	f.Float64Var(&c.lon, "lon", 0, "longitude of the secret location")
	f.StringVar(&c.tstr, "time", "", "query time, RFC 3339 or Unix seconds (default: now)")
	f.StringVar(&c.keyDir, "key-dir", "", "directory of the state key and records (default: the user config directory's tracepriv/geoind)")
	f.BoolVar(&c.newBudget, "new-budget", false, "start a fresh budget even where the record knows an earlier session at --state (deleted or replaced); recorded")
	f.StringVar(&c.uid, "uid", "", "the person (user id) the session belongs to and is charged to; required unless --no-ledger or --seed")
	c.led.Add(f)
	c.g.Add(f, false)
	return cmd
}

func (c *geoindQueryCmd) run(cmd *cobra.Command) error {
	if c.state == "" || !cmd.Flags().Changed("lat") || !cmd.Flags().Changed("lon") {
		return usageErrorf("geoind query: --state, --lat and --lon are required")
	}
	if c.g.Manager == "planned" {
		return usageErrorf("geoind query: --manager planned needs every query in advance (geoind sanitize plans over a trace's points); a session takes --manager fixed-rate or fixed-utility")
	}
	p := geo.Point{Lat: c.lat, Lon: c.lon}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("geoind query: --lat/--lon: %w", err)
	}
	t, err := parseQueryTime(c.tstr)
	if err != nil {
		return err
	}
	if err := checkStatePath(c.state); err != nil {
		return fmt.Errorf("geoind query: %w", err)
	}
	lf, _, err := c.led.Open(c.env, cmd.Flags(), "geoind query")
	if err != nil {
		return err
	}
	if lf != nil {
		defer lf.Close()
	}
	sf := geoind.StateFile{Path: c.state, KeyDir: c.keyDir, NewBudget: c.newBudget}
	// missing is a deleted state, reported as such (below), not as a
	// configuration missing for a new one.
	cfg, missing, err := c.sessionConfig(cmd, sf)
	if err != nil {
		return err
	}
	err = missing
	var pending, before string
	if err == nil && lf != nil {
		pending, before, err = c.charge(lf, sf, cfg)
		if err != nil {
			return err
		}
	}
	var rep geoind.Report
	if err == nil {
		rep, err = sf.Query(cfg, p, t, c.env.Source())
	}
	if pending != "" {
		c.tieCharge(lf, pending, before, err)
	}
	if err != nil {
		return queryError(c.state, err)
	}
	c.reportNewBudget(sf)
	return c.env.Emit(rep, rep.WriteText)
}

// sessionConfig is the configuration of a session that starts (no state,
// or --new-budget), nil for an existing one, whose configuration the
// flags may not change. missing is the error of a deleted state that
// starts no session.
func (c *geoindQueryCmd) sessionConfig(cmd *cobra.Command, sf geoind.StateFile) (cfg *geoind.Config, missing, err error) {
	if _, serr := os.Stat(c.state); serr != nil || c.newBudget {
		cf, cerr := c.g.Config()
		switch {
		case cerr == nil:
			return &cf, nil, nil
		case !c.newBudget:
			if _, err := sf.Load(); errors.Is(err, geoind.ErrStateMissing) {
				return nil, err, nil
			}
		}
		return nil, nil, fmt.Errorf("geoind query: %s: starting a session: %w", c.state, cerr)
	}
	var changed []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if cli.IsGeoIndConfigFlag(f.Name) {
			changed = append(changed, "--"+f.Name)
		}
	})
	if len(changed) > 0 {
		return nil, nil, fmt.Errorf("geoind query: %s: the session exists; its configuration cannot be changed (%s)", c.state, strings.Join(changed, ", "))
	}
	return nil, nil, nil
}

// charge charges the session in lf before the query (chargeSession); it
// returns the pending key of a session that starts and the id of the
// session the state held before.
func (c *geoindQueryCmd) charge(lf *budget.File, sf geoind.StateFile, cfg *geoind.Config) (pending, before string, err error) {
	if c.uid == "" {
		return "", "", usageErrorf("geoind query: --uid U is required: every private query is charged to its person in the ledger %s, so that a new --state does not start a fresh budget; give the person's uid, or --no-ledger to release without recording it", lf.Path())
	}
	if st, lerr := geoind.ReadState(c.state); lerr == nil && st.Seal != nil {
		before = st.Seal.ID
	}
	pending, err = chargeSession(c.env, lf, c.led, sf, cfg, c.uid, c.state)
	return pending, before, err
}

// tieCharge ties the pending charge to the session now that it has an
// id; a session that did not start (no new state landed) released
// nothing, and its charge is undone.
func (c *geoindQueryCmd) tieCharge(lf *budget.File, pending, before string, queryErr error) {
	st, err := geoind.ReadState(c.state)
	switch {
	case err == nil && st.Seal != nil && st.Seal.ID != before:
		err = lf.SetRelease(pending, sessionRelease(st.Seal.ID))
	case queryErr != nil:
		err = lf.Undo(pending)
	default:
		err = nil // the charge stays pending: an upper bound
	}
	if err != nil && !c.env.Quiet {
		fmt.Fprintf(c.env.Stderr, "tracepriv: ledger: %v (the session stays charged; its next query charges it again)\n", err)
	}
}

// queryError says what a query that released nothing can do next.
func queryError(state string, err error) error {
	switch {
	case geoind.IsExhausted(err):
		return fmt.Errorf("geoind query: %s: %w (nothing released)", state, err)
	case errors.Is(err, geoind.ErrStateMissing):
		return fmt.Errorf("geoind query: %w.\nTo start a new budget for this person anyway (the privacy losses of both budgets add up), repeat with --new-budget and the configuration flags", err)
	case errors.Is(err, geoind.ErrStateModified), errors.Is(err, geoind.ErrStateRolledBack), errors.Is(err, geoind.ErrStateUnknown):
		return fmt.Errorf("geoind query: %w.\nNothing was released. If the state is lost for good, --new-budget starts a fresh one (recorded); --key-dir selects the key directory", err)
	}
	return fmt.Errorf("geoind query: %w", err)
}

// reportNewBudget says, after a --new-budget start, what the earlier
// sessions at the path spent, which adds to this one's.
func (c *geoindQueryCmd) reportNewBudget(sf geoind.StateFile) {
	if !c.newBudget || c.env.Quiet {
		return
	}
	if h, err := sf.History(); err == nil && len(h) > 1 {
		spent := 0.0
		for _, s := range h[1:] {
			spent += s.ReplacedSpent
		}
		fmt.Fprintf(c.env.Stderr, "tracepriv: started a new budget at %s; %d earlier session(s) there spent %.4g in total, which adds to this one's\n", c.state, len(h)-1, spent)
	}
}

// checkStatePath refuses a --state that query would lose or cannot use: a
// directory, a path whose directory does not exist, or an existing file
// that is not a session state (query, and with --new-budget replaces, only
// states).
func checkStatePath(state string) error {
	if err := checkOut("--state", state); err != nil {
		return err
	}
	if _, err := os.Stat(state); err != nil {
		return nil // a new session
	}
	if _, err := geoind.ReadState(state); err != nil {
		return fmt.Errorf("--state %s exists and is not a session state written by geoind query (%v); give the session's state file or a new path (move the file away if it is a damaged state)", state, err)
	}
	return nil
}

// sessionRelease is the ledger's release key of a geoind session.
func sessionRelease(id string) string { return "geoind session " + id }

// chargeSession charges the session a query runs in, once, before the
// query releases anything: a session that will start (cfg non-nil: no
// state, or --new-budget) is charged its budget ε as pending, keyed by a
// key that the caller replaces with the session's id once it exists (the
// returned key); an existing session is charged only if the ledger has no
// charge for it (it was started without --ledger, or its start's key was
// never replaced). A session charged to another person is refused.
func chargeSession(env *cli.Env, lf *budget.File, led cli.LedgerFlags, sf geoind.StateFile, cfg *geoind.Config, uid, state string) (string, error) {
	charge := led.Request(budget.GeoInd, "tracepriv geoind query", state)
	if cfg != nil {
		if _, err := os.Stat(state); err != nil && !sf.NewBudget {
			// A deleted state is refused by Query; charge nothing for it.
			if _, lerr := sf.Load(); errors.Is(lerr, geoind.ErrStateMissing) {
				return "", nil
			}
		}
		nonce := make([]byte, 8)
		if _, err := rand.Read(nonce); err != nil {
			return "", err
		}
		charge.Release = "geoind session starting " + hex.EncodeToString(nonce)
		charge.Pending = true
		charge.Epsilon[uid] = cfg.Params.Epsilon
		charge.GridM = cfg.Noise.Grid
		if err := lf.Charge(charge); err != nil {
			return "", cli.LedgerError("geoind query", err)
		}
		env.ReportCharge(lf, charge)
		return charge.Release, nil
	}
	st, err := sf.Load()
	if err != nil {
		return "", nil // Query reports it
	}
	release := sessionRelease(st.Seal.ID)
	if lf.Ledger().Charged(uid, budget.GeoInd, release) {
		return "", nil
	}
	if other := lf.Ledger().ChargedUIDs(budget.GeoInd, release); len(other) > 0 {
		return "", usageErrorf("geoind query: --uid %s: the session at %s is charged to person %q in %s; give that person's uid", uid, state, other[0], lf.Path())
	}
	charge.Release = release
	charge.Epsilon[uid] = st.Config.Params.Epsilon
	charge.GridM = st.Config.Noise.Grid
	if err := lf.Charge(charge); err != nil {
		return "", cli.LedgerError("geoind query", err)
	}
	env.ReportCharge(lf, charge)
	return "", nil
}

// parseQueryTime accepts RFC 3339 or Unix seconds.
func parseQueryTime(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if sec, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(sec) && !math.IsInf(sec, 0) {
		return time.Unix(0, int64(sec*1e9)).UTC(), nil
	}
	return time.Time{}, usageErrorf("--time %q: want RFC 3339 (2008-10-24T02:09:59Z) or Unix seconds", s)
}
