// Command gpubridge is the gpubridge daemon (`gpubridge serve`) and its admin
// CLI. This package only parses, wires adapters to domain packages and
// prints; all logic lives in the packages it calls. Nothing imports it.
package main
