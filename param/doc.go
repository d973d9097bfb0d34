// Package param checks the parameters of tracepriv's public functions and
// reports a bad one the same way everywhere: as an *Error naming the
// parameter, its value and what is wrong, which wraps ErrInvalid.
//
// For example, checking two parameters, and what a caller sees:
//
//	err := param.First(param.Positive("epsilon", -1), param.InOpen("delta", 1e-5, 0, 1))
//	fmt.Println(err) // epsilon = -1: must be positive and finite
//	var pe *param.Error
//	if errors.As(err, &pe) { // so does any package's bad parameter
//		fmt.Printf("flag --%s: %s\n", pe.Name, pe.Why) // flag --epsilon: must be positive and finite
//	}
//	fmt.Println(errors.Is(err, param.ErrInvalid)) // true
//
// Callers branch with errors.Is(err, param.ErrInvalid) (is it the caller's
// input?) or errors.As(err, &pe) with pe a *param.Error (which one, so that
// a CLI can name its flag or a ledger reader its field). Every package
// reports a bad parameter as a *param.Error; there is no other type.
//
// A parameter rejected because of another error keeps that error in Err
// (Wrap builds one: Why is its text), so errors.As and errors.Is reach a
// prior file's own *Error or a package's sentinel through it.
//
// The helpers (Positive, Finite, Probability, In, …) return nil or an
// *Error whose Why reads "must be …", so messages are uniform; every check
// fails on NaN.
package param
