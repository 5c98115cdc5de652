package config

import (
	"errors"
	"strings"
	"testing"
)

func TestChargebackNames(t *testing.T) {
	cases := map[string]struct {
		name string
		want string // "" valid, else part of the message
	}{
		"default":         {"", ""},
		"site":            {"Research Computing, Uni Example", ""},
		"non-ASCII":       {"Rechenzentrum Zürich", ""},
		"too long":        {strings.Repeat("x", MaxNameLen+1), "is 256 bytes; at most 255"},
		"leading space":   {" HPC", "leading or trailing spaces"},
		"only spaces":     {"   ", "leading or trailing spaces"},
		"newline":         {"HPC\ncenter", "control character"},
		"not UTF-8":       {"HPC\xff", "not UTF-8"},
		"longest allowed": {strings.Repeat("é", MaxNameLen/2), ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Default()
			c.Chargeback = Chargeback{ProviderName: tc.name, PublisherName: tc.name, InvoiceIssuerName: tc.name}
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%q refused: %v", tc.name, err)
				}
				return
			}
			var ve ValidationError
			if !errors.As(err, &ve) || len(ve) != 3 {
				t.Fatalf("want three problems, got %v", err)
			}
			for i, f := range []string{"chargeback.invoiceIssuerName", "chargeback.providerName", "chargeback.publisherName"} {
				if ve[i].Field != f || !strings.Contains(ve[i].Msg, tc.want) {
					t.Errorf("problem %d: %s: %s; want field %s with %q", i, ve[i].Field, ve[i].Msg, f, tc.want)
				}
			}
		})
	}
}

func TestChargebackEnv(t *testing.T) {
	c := Default()
	c.ApplyEnv(envOf(map[string]string{"GPUBRIDGE_PROVIDER_NAME": "HPC Centre", "GPUBRIDGE_PUBLISHER_NAME": "HPC Centre GPU service",
		"GPUBRIDGE_INVOICE_ISSUER": "Finance"}))
	if got := c.Chargeback; got != (Chargeback{"HPC Centre", "HPC Centre GPU service", "Finance"}) {
		t.Errorf("chargeback from the environment: %+v", got)
	}
}
