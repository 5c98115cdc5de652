package exporttest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export/focuscheck"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// Provider is what gpubridge supports, in the specification's terms: it
// publishes a price list with unit prices (the rate card), measures
// usage, has sub accounts (Slurm accounts) and provider-defined tags, and
// bills resources (GPUs of an account, jobs) of two types. It has no
// negotiated prices, commitment discounts, capacity reservations, regions
// or availability zones (yet: bookings will bring capacity
// reservations), and one pricing category.
var Provider = focuscheck.Provider{
	PriceLists: true, UnitPrices: true, UsageMeasurement: true, SubAccounts: true, Tags: true,
	Resources: true, ResourceTypes: true,
}

// Options are the checks' options for an export priced with card:
// metadata, the card's price list for SkuPriceId lookups (at x_RateFrom,
// the day the row's rate took effect), and invoices (InvoiceId → payable
// amount) to sum BilledCost against.
func Options(card pricing.Card, metadata []byte, invoices map[string]string) focuscheck.Options {
	list := card.PriceList()
	return focuscheck.Options{
		Provider: Provider, Metadata: metadata, Invoices: invoices,
		PriceList: func(id string, r focuscheck.Row) (string, bool) {
			at, err := time.Parse("2006-01-02T15:04:05Z", r.Get("x_RateFrom"))
			if err != nil {
				return "", false
			}
			found, price := false, pricing.Price(0)
			for _, p := range list {
				if p.SkuPriceID == id && p.From.Unix() <= at.Unix() {
					found, price = true, p.UnitPrice
				}
			}
			return price.String(), found
		},
	}
}

// Conforms fails t with every MUST and SHOULD violation of the FOCUS
// dataset data (with its metadata) and returns the violations.
func Conforms(t testing.TB, name string, data []byte, o focuscheck.Options) []focuscheck.Violation {
	t.Helper()
	vs, err := focuscheck.Check(bytes.NewReader(data), o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(vs) > 0 {
		var b strings.Builder
		for i, v := range vs {
			if i == 20 {
				b.WriteString("\n  ...")
				break
			}
			b.WriteString("\n  " + v.String())
		}
		t.Errorf("%s: %d FOCUS rule(s) broken:%s", name, len(vs), b.String())
	}
	return vs
}
