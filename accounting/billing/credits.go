package billing

import (
	"context"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// credits reads the credit lines booked in p (of account, when given) for
// the period view: few per period, so they travel in the export's Meta.
func (b Books) credits(ctx context.Context, p meter.Period, account string) ([]export.Credit, error) {
	var out []export.Credit
	err := b.Ledger.Credits(ctx, b.Cluster, ledger.CreditQuery{Booked: p, Account: account}, func(c ledger.Credit) error {
		out = append(out, export.Credit{Key: c.Key, Kind: c.Kind, Tenant: c.Tenant, Account: c.Account, Amount: c.Amount, Period: c.Period,
			EventID: c.EventID, Node: c.Node, JobID: c.JobID, Submit: c.Submit, BookingID: c.BookingID, GPUSeconds: c.GPUSeconds,
			Start: c.Start, End: c.End, Reason: c.Reason})
		return nil
	})
	return out, err
}
