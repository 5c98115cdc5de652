// Command app wires the fake module's packages together.
package main

import (
	"example.com/fakemod/adapter"
	"example.com/fakemod/cmd/config"
	"example.com/fakemod/core"
	feature "example.com/fakemod/feature/leaky"
	"example.com/fakemod/front"
	"example.com/fakemod/pure/indirect"
	"example.com/fakemod/pure/leaky"
	"example.com/fakemod/pure/shaded"
)

func main() {
	adapter.Serve(core.Price(2))
	leaky.Run()
	indirect.Publish()
	shaded.Nothing()
	feature.Cluster(config.Config{})
	front.Start()
}
