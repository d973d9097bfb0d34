package budget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/tracepriv/tracepriv/internal/jsondoc"
)

// ErrNeedsGrid is returned by MigrateV1 for a version-1 ledger with
// geoind charges and no grid: version 1 did not record the output grid
// their conversion (GeoIndCharge) needs.
var ErrNeedsGrid = errors.New("version 1 ledger with geoind charges, which did not record the output grid their conversion to the one currency needs")

// v1Ledger is the version-1 layout: one account per person and
// mechanism, in the mechanism's own unit.
type v1Ledger struct {
	Version     int    `json:"version"`
	Composition string `json:"composition"`
	Accounts    []*struct {
		UID       string    `json:"uid"`
		Mechanism Mechanism `json:"mechanism"`
		Unit      string    `json:"unit"`
		Budget    float64   `json:"budget"`
		Spent     float64   `json:"spent"`
		Lambda    float64   `json:"lambda,omitempty"`
		RadiusM   float64   `json:"radius_m,omitempty"`
		Opened    time.Time `json:"opened"`
		Raised    []Raise   `json:"raised,omitempty"`
	} `json:"accounts"`
	Charges []struct {
		Seq       int       `json:"seq"`
		UID       string    `json:"uid"`
		Mechanism Mechanism `json:"mechanism"`
		Epsilon   float64   `json:"epsilon"`
		Lambda    float64   `json:"lambda,omitempty"`
		RadiusM   float64   `json:"radius_m,omitempty"`
		Time      time.Time `json:"time"`
		Command   string    `json:"command"`
		Output    string    `json:"output,omitempty"`
		Release   string    `json:"release,omitempty"`
		Pending   bool      `json:"pending,omitempty"`
	} `json:"charges"`
}

// MigrateV1 reads a version-1 ledger (one account per person and
// mechanism) as a version-2 one, combining each person's accounts
// conservatively: the account keeps the cip account's order and radius
// (DefaultLambda, DefaultRadiusM if the person had none), every charge is
// kept with its native epsilon and charged in that currency (geoind ones
// at gridM metres, GeoIndCharge), and the budget is the smaller of the
// person's budgets, the geoind one converted, so that neither old budget
// is exceeded. gridM must be at least the largest grid the geoind
// sessions used; 0 refuses a ledger with geoind charges (ErrNeedsGrid).
func MigrateV1(data []byte, gridM float64) (*Ledger, error) {
	var old v1Ledger
	if err := jsondoc.DecodeVersion(data, 1, &old); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if gridM < 0 || math.IsInf(gridM, 0) || math.IsNaN(gridM) {
		return nil, fmt.Errorf("budget: grid %v, want metres > 0", gridM)
	}
	l := &Ledger{Version: Version, Composition: compositionRule}
	for _, c := range old.Charges {
		if c.Mechanism == GeoInd && gridM == 0 {
			return nil, ErrNeedsGrid
		}
	}
	// The currency: the person's cip account's order and radius.
	for _, oa := range old.Accounts {
		if oa == nil || oa.UID == "" {
			return nil, fmt.Errorf("%w: version 1 account without a uid", ErrDamaged)
		}
		a := l.Account(oa.UID)
		if a == nil {
			a = &Account{UID: oa.UID, Unit: CurrencyUnit, Lambda: DefaultLambda, RadiusM: DefaultRadiusM, Opened: oa.Opened}
			l.Accounts = append(l.Accounts, a)
		}
		if oa.Mechanism == CIP {
			a.Lambda, a.RadiusM = oa.Lambda, oa.RadiusM
		}
		if oa.Opened.Before(a.Opened) {
			a.Opened = oa.Opened
		}
	}
	for _, oa := range old.Accounts {
		a := l.Account(oa.UID)
		b := oa.Budget
		if oa.Mechanism == GeoInd {
			b = GeoIndCharge(b, gridM, a.Lambda, a.RadiusM)
		}
		if a.Budget == nil || b < *a.Budget {
			a.Budget = &b
		}
		a.Raised = append(a.Raised, oa.Raised...)
		a.Migrated += fmt.Sprintf("version 1 %s budget %g; ", oa.Mechanism, oa.Budget)
	}
	for _, a := range l.Accounts {
		slices.SortFunc(a.Raised, func(x, y Raise) int { return x.Time.Compare(y.Time) })
		a.Migrated += "the smaller budget kept, in the one currency"
		if gridM > 0 {
			a.Migrated += fmt.Sprintf(" (geoind at a grid of %g m)", gridM)
		}
	}
	for i, oc := range old.Charges {
		a := l.Account(oc.UID)
		if a == nil {
			return nil, fmt.Errorf("%w: version 1 charge %d: person %q has no account", ErrDamaged, i+1, oc.UID)
		}
		c := Charge{Seq: i + 1, UID: oc.UID, Mechanism: oc.Mechanism, NativeEpsilon: oc.Epsilon, Lambda: oc.Lambda, RadiusM: oc.RadiusM,
			Time: oc.Time, Command: oc.Command, Output: oc.Output, Release: oc.Release, Pending: oc.Pending}
		if c.Mechanism == GeoInd {
			c.GridM = gridM
		}
		c.Epsilon = charged(c.Mechanism, c.NativeEpsilon, c.GridM, a)
		l.Charges = append(l.Charges, c)
		a.Spent += c.Epsilon
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%w: version 1 ledger: %v", ErrDamaged, err)
	}
	return l, nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
