// Command gpubridge is the gpubridge daemon (`gpubridge serve`) and its admin
// CLI. This package only parses, wires adapters to domain packages and
// prints; all logic lives in the packages it calls.
package main

import (
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
