package ledger

import (
	"testing"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestAppendStr(t *testing.T) {
	cases := map[string]string{
		"":                `''`,
		"acme":            `'acme'`,
		"1g.10gb":         `'1g.10gb'`,
		"m4syn-a_b:c@d+e": `'m4syn-a_b:c@d+e'`,
		"o'brien":         `X'6f27627269656e'`,
		`back\slash`:      `X'6261636b5c736c617368'`,
		"naïve":           `X'6e61c3af7665'`,
	}
	for in, want := range cases {
		if got := string(appendStr(nil, in)); got != want {
			t.Errorf("appendStr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestAppendPeriod(t *testing.T) {
	for _, s := range []string{"2026-11", "0999-01", "2031-12"} {
		p, err := meter.ParsePeriod(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendPeriod(nil, p)); got != s {
			t.Errorf("appendPeriod(%s) = %s", s, got)
		}
	}
}
