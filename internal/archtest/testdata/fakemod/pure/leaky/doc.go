// Package leaky runs a program: I/O, so it is not pure.
package leaky

import "os/exec"

// Run runs true.
func Run() { _ = exec.Command("true").Run() }
