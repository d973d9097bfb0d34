// The synthetic trajectory databases of the Chapter 3 reproduction and of
// "tracepriv audit support", as trajdb databases (package trajdata holds
// their definitions).

package repro

import (
	"github.com/tracepriv/tracepriv/internal/trajdata"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trajdb"
)

// AuditDemoBounds returns the bounds AuditDemoDB is audited under: one
// sequence of at most 3 symbols per person.
func AuditDemoBounds() trajdb.Bounds {
	return trajdb.Bounds{MaxLen: trajdata.AuditDemoMaxLen, MaxSeqs: trajdata.AuditDemoMaxSeqs}
}

// AuditDemoDB returns the audit's demonstration database and its victim
// (trajdata.AuditDemo): 40 people over 4 symbols, "victim" alone holding
// <3 1 2> while 23 others share its prefix <3 1>.
func AuditDemoDB() (*trajdb.DB, string) {
	return trajdbOf(trajdata.AuditDemoSymbols, trajdata.AuditDemo()), trajdata.AuditDemoVictim
}

// CommutersDB returns trajdata.Commuters as a database over the grid's
// Rows·Cols cells.
func CommutersDB(opt trajdata.CommuterOptions, src noise.Source) (*trajdb.DB, error) {
	ps, err := trajdata.Commuters(opt, src)
	if err != nil {
		return nil, err
	}
	return trajdbOf(opt.Rows*opt.Cols, ps), nil
}

func trajdbOf(size int, ps []trajdata.Person) *trajdb.DB {
	db := &trajdb.DB{Size: size, Users: make([]trajdb.User, len(ps))}
	for i, p := range ps {
		db.Users[i] = trajdb.User(p)
	}
	return db
}
