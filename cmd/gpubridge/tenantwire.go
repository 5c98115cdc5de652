package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
	"github.com/gpubridge/gpubridge/internal/app"
)

// tenantService wires the tenant use cases for a command (app.Env.Tenants);
// guardPath is where apply writes the guard file ("" for none).
func (a *App) tenantService(cmd *cobra.Command, guardPath string) (*tenantadmin.Service, error) {
	return a.Tenants(cmd.CommandPath(), guardPath)
}

// tenantErr marks the use cases' input errors as usage errors (exit 2).
func tenantErr(err error) error {
	if errors.Is(err, tenantadmin.ErrInput) {
		return app.Input(err)
	}
	return err
}
