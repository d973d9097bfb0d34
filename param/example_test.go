package param_test

import (
	"errors"
	"fmt"

	"github.com/tracepriv/tracepriv/param"
)

func ExampleError() {
	err := param.Positive("sigma", -2)
	var pe *param.Error
	if errors.As(err, &pe) {
		fmt.Printf("flag --%s: %v\n", pe.Name, err)
	}
	fmt.Println(errors.Is(err, param.ErrInvalid))
	// Output:
	// flag --sigma: sigma = -2: must be positive and finite
	// true
}
