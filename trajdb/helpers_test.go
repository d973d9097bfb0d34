package trajdb

import (
	"github.com/tracepriv/tracepriv/internal/trajdata"
	"github.com/tracepriv/tracepriv/noise"
)

// auditDemoBounds bounds auditDemoDB: one sequence of at most 3 symbols per
// person.
var auditDemoBounds = Bounds{MaxLen: trajdata.AuditDemoMaxLen, MaxSeqs: trajdata.AuditDemoMaxSeqs}

// auditDemoDB is the audit's demonstration database (trajdata.AuditDemo)
// and its victim.
func auditDemoDB() (*DB, string) {
	return testDB(trajdata.AuditDemoSymbols, trajdata.AuditDemo()), trajdata.AuditDemoVictim
}

// commuters is trajdata.Commuters as a database.
func commuters(opt trajdata.CommuterOptions, src noise.Source) (*DB, error) {
	ps, err := trajdata.Commuters(opt, src)
	if err != nil {
		return nil, err
	}
	return testDB(opt.Rows*opt.Cols, ps), nil
}

func testDB(size int, ps []trajdata.Person) *DB {
	db := &DB{Size: size, Users: make([]User, len(ps))}
	for i, p := range ps {
		db.Users[i] = User(p)
	}
	return db
}
