package main

import (
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

func TestAccountingCommandsRegistered(t *testing.T) {
	root := newRootCmd(&App{Env: &app.Env{}})
	for _, path := range [][]string{
		{"ingest"}, {"close"}, {"export", "chargeback"}, {"show", "usage"}, {"show", "rates"}, {"show", "ratecard"},
		{"add", "rate"}, {"add", "gputype"}, {"delete", "rate"}, {"load", "ratecard"},
	} {
		c, rest, err := root.Find(path)
		if err != nil || len(rest) != 0 || c.Name() != path[len(path)-1] {
			t.Errorf("command %v not found (%v, %v)", path, c.Name(), err)
		}
	}
}
