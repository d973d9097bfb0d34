module example.com/tracepriv-library

go 1.26.8

require github.com/tracepriv/tracepriv v0.0.0

require (
	github.com/paulmach/orb v0.14.0 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	golang.org/x/tools v0.52.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

// The module path github.com/tracepriv/tracepriv cannot be fetched: point it at a clone.
replace github.com/tracepriv/tracepriv => ../..
