// Package leaky is a feature that reads the configuration type: a
// violation once the floors put cmd above feature.
package leaky

import "example.com/fakemod/cmd/config"

// Cluster reads the configuration.
func Cluster(c config.Config) string { return c.Cluster }
