package main

import (
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
	// --accuracy alone means fixed-utility, as in geoind sanitize (it was
	// ignored under fixed-rate, and a NaN then broke the state file).
	if err := c.g.ChooseManager(cmd.Flags()); err != nil {
		return fmt.Errorf("geoind query: %w", err)
	}
	if c.g.Manager == "planned" {
		return usageErrorf("geoind query: --manager planned needs every query in advance (geoind sanitize plans over a trace's points); a session takes --manager fixed-rate or fixed-utility")
	}
	p := geo.Point{Lat: c.lat, Lon: c.lon}
	if err := p.Validate(); err != nil {
		return usageErrorf("geoind query: --lat %v --lon %v: %w", c.lat, c.lon, err)
	}
	t, err := parseQueryTime(c.tstr)
	if err != nil {
		return err
	}
	if err := cli.CheckStatePath(c.state); err != nil {
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
		cli.TieSessionCharge(c.env, lf, c.state, pending, before, err)
	}
	if err != nil {
		return cli.QueryError(c.state, err)
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
func (c *geoindQueryCmd) charge(lf budget.Store, sf geoind.StateFile, cfg *geoind.Config) (pending, before string, err error) {
	if c.uid == "" {
		return "", "", usageErrorf("geoind query: --uid U is required: every private query is charged to its person in the ledger %s, so that a new --state does not start a fresh budget; give the person's uid, or --no-ledger to release without recording it", lf.Path())
	}
	if st, lerr := geoind.ReadState(c.state); lerr == nil && st.Seal != nil {
		before = st.Seal.ID
	}
	pending, err = cli.ChargeSession(c.env, lf, c.led, sf, cfg, c.uid, c.state)
	return pending, before, err
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

// parseQueryTime accepts RFC 3339 or Unix seconds.
func parseQueryTime(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	// Unix seconds are kept within what time.Unix(0, ns) holds (years
	// 1678 to 2262): 1e308 once wrapped round to 1677.
	if sec, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(sec) < math.MaxInt64/1e9 {
		return time.Unix(0, int64(sec*1e9)).UTC(), nil
	}
	return time.Time{}, usageErrorf("geoind query: --time %q: want RFC 3339 (2008-10-24T02:09:59Z) or Unix seconds between years 1678 and 2262", s)
}
