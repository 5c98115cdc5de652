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

// Dump is what dump made: the tenants file, and with a directory the rate
// card's file (Card nil: its dump failed, after the tenants file was
// written).
type Dump struct {
	Tenants TenantsDump
	Card    *CardDump
}

// Dump makes the tenants file for the command what; with dir it writes it
// and the rate card's file there (DumpTenants, DumpRateCard). A rate card
// that fails is returned with the tenants file written.
func (e *Env) Dump(ctx context.Context, what, dir string) (Dump, error) {
	td, err := e.DumpTenants(ctx, what, dir)
	if err != nil {
		return Dump{}, tenantErr(err)
	}
	d := Dump{Tenants: td}
	if dir == "" {
		return d, nil
	}
	cd, err := e.DumpRateCard(ctx, dir)
	if err != nil {
		return d, err
	}
	d.Card = &cd
	return d, nil
}

// Text is what dump prints: the tenants file itself when it was not
// written to a directory, else what it wrote.
func (d Dump) Text() string {
	td, cd := d.Tenants, d.Card
	if td.Path == "" {
		return string(td.YAML)
	}
	s := fmt.Sprintf("wrote %s: %d tenant(s), %d being deleted\n", td.Path, len(td.File.Tenants), len(td.File.Delete))
	switch {
	case cd == nil:
		return s
	case !cd.Written:
		return s + fmt.Sprintf("no rate card: %s not written\n", cd.Path)
	}
	return s + fmt.Sprintf("wrote %s: %s, %d rate(s), %d GPU type(s)\n", cd.Path, cd.Card.Currency, len(cd.Card.Rates), len(cd.Card.Types))
}
