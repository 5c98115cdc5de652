package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/atomicfile"
)

// Dump's files: what gpubridge's store holds, the source of truth for
// policy, as the files that restore it (gpubridge dump).

// TenantsDump is the tenants file DumpTenants made, and where it wrote it
// ("" when it was asked for the bytes only).
type TenantsDump struct {
	File tenant.File
	YAML []byte
	Path string
}

// DumpTenants makes the tenants file of every tenant for the command what
// and writes it to dir/tenants.yaml (atomically, mode 0600, dir made if
// missing); with dir "" it writes nothing. Errors of the tenant use case
// are tenantadmin's (tenantadmin.ErrInput for bad input).
func (e *Env) DumpTenants(ctx context.Context, what, dir string) (TenantsDump, error) {
	svc, err := e.Tenants(what, "")
	if err != nil {
		return TenantsDump{}, err
	}
	f, b, err := svc.Dump(ctx)
	if err != nil {
		return TenantsDump{}, err
	}
	d := TenantsDump{File: f, YAML: b}
	if dir == "" {
		return d, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return d, Input(fmt.Errorf("dump -f %s: %w", dir, err))
	}
	d.Path = filepath.Join(dir, "tenants.yaml")
	if _, err := atomicfile.Write(d.Path, b, atomicfile.Options{Mode: 0o600}); err != nil {
		return d, err
	}
	return d, nil
}

// CardDump is the rate card DumpRateCard wrote to Path (Written false:
// there is no card, and no file).
type CardDump struct {
	Card    pricing.Card
	Path    string
	Written bool
}

// DumpRateCard writes the current rate card to dir/ratecard.yaml
// (atomically, mode 0600); when there is no card it removes a
// ratecard.yaml left there.
func (e *Env) DumpRateCard(ctx context.Context, dir string) (CardDump, error) {
	st, err := e.RateCards(ctx)
	if err != nil {
		return CardDump{}, err
	}
	card, err := ratecard.Get(ctx, st)
	d := CardDump{Card: card, Path: filepath.Join(dir, "ratecard.yaml")}
	switch {
	case errors.Is(err, ratecard.ErrNoCard):
		if err := os.Remove(d.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return d, err
		}
		return d, nil
	case err != nil:
		return d, err
	}
	y, err := card.YAML()
	if err != nil {
		return d, err
	}
	if _, err := atomicfile.Write(d.Path, y, atomicfile.Options{Mode: 0o600}); err != nil {
		return d, err
	}
	d.Written = true
	return d, nil
}
