package ratecard

import (
	"time"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/table"
)

// Table is the card's price list as `show rates` prints it (Rows).
func Table(card pricing.Card, now time.Time) table.Table {
	t := table.Table{
		Header: []string{"GPUType", "Tier", "PerGPUHour", "Currency", "From", "Basis", "SkuPriceId"},
		Keys:   []string{"gpuType", "tier", "perGPUHour", "currency", "from", "basis", "skuPriceId"},
		Kinds:  []table.Kind{table.String, table.String, table.Decimal, table.String, table.String, table.String, table.String},
		Rows:   [][]string{},
	}
	for _, r := range Rows(card, now) {
		t.Rows = append(t.Rows, []string{r.Type, r.Tier, r.PerGPUHour, r.Currency, r.From, r.Basis, r.SkuPriceID})
	}
	return t
}
