//go:build js && wasm

package device_test

import (
	"syscall/js"
	"time"
)

// processCPU is Node.js's process.cpuUsage() (user + system), the
// module's CPU time; 0 where there is no process object (a browser).
func processCPU() time.Duration {
	p := js.Global().Get("process")
	if p.Type() != js.TypeObject {
		return 0
	}
	u := p.Call("cpuUsage")
	return time.Duration(u.Get("user").Float()+u.Get("system").Float()) * time.Microsecond
}
