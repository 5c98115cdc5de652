package main

import "github.com/spf13/cobra"

// registerSlurm adds the commands that talk to slurmrestd: ping, show nodes.
func registerSlurm(a *App, root, show *cobra.Command) {}
