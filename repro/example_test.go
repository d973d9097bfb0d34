package repro_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/repro"
)

// The thesis reproduction as "tracepriv repro thesis" runs it: compute,
// then draw and record. Figure 5.2 at an accepted risk of 0.1 is the
// thesis's calibration example (ε = 2.1201 for Laplace, m = 10).
func ExampleThesis() {
	res, err := repro.Thesis(repro.ThesisOptions{Reps: 2, Src: noise.Seeded(1)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Fig52 {
		if r.Risk == 0.1 {
			fmt.Printf("Laplace, m = 10, RAD <= 0.1: epsilon %.4f, 95%% error %.3f\n", r.EpsilonRAD, r.AlphaRAD)
		}
	}
	dir, err := os.MkdirTemp("", "repro-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := repro.WriteThesis(dir, res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Files), "files, the last", filepath.Base(res.Files[len(res.Files)-1]))
	// Output:
	// Laplace, m = 10, RAD <= 0.1: epsilon 2.1201, 95% error 1.413
	// 13 files, the last results.json
}
