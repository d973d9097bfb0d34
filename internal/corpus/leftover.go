package corpus

import (
	"slices"
)

// Leftover is what an earlier run of a corpus release left under its
// output of each person it charged pending and never settled (it was
// killed between the charge and the settlement): the Beam pipeline's
// release, which charges every person under one key before its job runs.
// The single-machine runner, which charges unit by unit, settles its own
// in settleCrashed; both judge a unit by the same tests (landed,
// certificateOn).
type Leftover struct {
	// Settled are the certified epsilons of the people whose unit's
	// certificate is under out and names exactly the unit's people.
	Settled map[string]float64
	// Undone are the people nothing of whom is under out: no file of
	// their unit, no certificate, no temporary file of either (or who
	// were released under another name, Unit.Alias, whose unit's
	// certificate is there). Their charge goes.
	Undone []string
	// Kept are the people whose unit left something under out but no
	// certificate naming exactly its people, or who are in no unit of the
	// corpus as it is now: in doubt, their charge stays at its upper bound.
	Kept []string
}

// Leftovers judges the people pending, charged by an earlier run of the
// release of units from the corpus root in to out, by what that run left
// under out. epsilons reads a certificate's certified epsilons by uid (as
// Config.Epsilons); suffix is the certificates' (Sanitizer's).
func Leftovers(pending []string, units []Unit, suffix, in, out string, epsilons func([]byte) (map[string]float64, error)) Leftover {
	var l Leftover
	for _, uid := range pending {
		i := slices.IndexFunc(units, func(u Unit) bool {
			_, alias := u.Alias[uid]
			return alias || slices.Contains(u.UIDs, uid)
		})
		if i < 0 {
			l.Kept = append(l.Kept, uid)
			continue
		}
		u := units[i]
		if !landed(u, suffix, in, out) {
			l.Undone = append(l.Undone, uid)
			continue
		}
		eps := certificateOn(u, suffix, out, epsilons)
		switch e, ok := eps[uid]; {
		case ok:
			if l.Settled == nil {
				l.Settled = map[string]float64{}
			}
			l.Settled[uid] = e
		case eps != nil && !slices.Contains(u.UIDs, uid):
			// Released as the person it was joined to, whose charge
			// covers it.
			l.Undone = append(l.Undone, uid)
		default:
			l.Kept = append(l.Kept, uid)
		}
	}
	return l
}
