// Package config is the fake module's configuration type (its roof).
package config

// Config is the configuration.
type Config struct{ Cluster string }
