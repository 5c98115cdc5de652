package app

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/table"
)

// shape is a printout as a list of "table:HEADER", "out:TEXT" and
// "err:TEXT" for comparing.
func shape(p Printout) []string {
	var got []string
	for _, part := range p.Parts {
		switch {
		case part.Table != nil && part.Table.Raw != nil && part.Table.Header == nil:
			got = append(got, "raw")
		case part.Table != nil:
			got = append(got, "table:"+strings.Join(part.Table.Header, ","))
		case part.Stderr:
			got = append(got, "err:"+part.Text)
		default:
			got = append(got, "out:"+part.Text)
		}
	}
	return got
}

func TestPrintoutBuilders(t *testing.T) {
	a, b := table.Table{Header: []string{"A"}}, table.Table{Header: []string{"B"}}
	cases := map[string]struct {
		p    Printout
		want []string
	}{
		"empty texts and notes add nothing": {Printout{}.Text("").Note("").Notes("", ""), nil},
		"notes get their newline":           {Printout{}.Notes("one", "", "two").Note("raw"), []string{"err:one\n", "err:two\n", "err:raw"}},
		"in order":                          {Printout{}.Table(a).Text("between\n").Table(b), []string{"table:A", "out:between\n", "table:B"}},
		"tables, a blank line between two":  {Tables([]table.Table{a, b}, "why these"), []string{"err:why these\n", "table:A", "out:\n", "table:B"}},
		"one table, no note":                {Tables([]table.Table{a}, ""), []string{"table:A"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, shape(tc.p)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	// A builder adds to a copy: the printout it was called on is unchanged.
	base := Printout{}.Text("x")
	_ = base.Text("y")
	if len(base.Parts) != 1 {
		t.Errorf("base changed: %v", shape(base))
	}
}

// TestPrintoutWrite: the parts go in order, tables through print, text to
// stdout or stderr; a printout with Err writes nothing and returns it, and
// print's error stops the rest.
func TestPrintoutWrite(t *testing.T) {
	var out, errw bytes.Buffer
	print := func(t table.Table) error {
		fmt.Fprintf(&out, "[%s]", t.Header[0])
		if t.Header[0] == "bad" {
			return errors.New("bad column")
		}
		return nil
	}
	p := Printout{}.Notes("why").Table(table.Table{Header: []string{"A"}}).Text("mid").Note("raw").Table(table.Table{Header: []string{"B"}})
	if err := p.Write(&out, &errw, print); err != nil || out.String() != "[A]mid[B]" || errw.String() != "why\nraw" {
		t.Errorf("Write: %v, stdout %q, stderr %q", err, out.String(), errw.String())
	}
	out.Reset()
	boom := errors.New("boom")
	if err := (Printout{Err: boom}).Text("never").Write(&out, &errw, print); !errors.Is(err, boom) || out.Len() != 0 {
		t.Errorf("Err: %v, stdout %q", err, out.String())
	}
	stop := Printout{}.Table(table.Table{Header: []string{"bad"}}).Text("after")
	if err := stop.Write(&out, &errw, print); err == nil || out.String() != "[bad]" {
		t.Errorf("print error: %v, stdout %q", err, out.String())
	}
}

// TestPrintouts: what each command's printout holds for the output
// options (the tables' contents are their views' tests).
func TestPrintouts(t *testing.T) {
	nov, _ := meter.ParsePeriod("2026-11")
	empty := []export.Summary{{Meta: export.Meta{Period: nov}}}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	state := IngestStatus{Cluster: "tb", State: ledger.State{Watermarks: map[string]meter.Watermark{"slurmdb": {Source: "slurmdb", Through: at.Unix()}}}}
	issued := token.Issued{Token: token.Token{Name: "ci", Tenant: "acme", Scope: token.Read}, Secret: "gpb_secret"}
	card := RateCardAt{Card: pricing.Card{Version: 1, Currency: "EUR"}, At: at}
	cases := map[string]struct {
		p    Printout
		want []string
	}{
		"usage, no use": {UsagePrintout(empty, table.Options{}), []string{"err:no GPU use booked in 2026-11 yet\n", "table:" + strings.Join(export.UsageTable(nil, true).Header, ",")}},
		"usage --json":  {UsagePrintout(empty, table.Options{JSON: true}), []string{"table:" + strings.Join(export.UsageTable(nil, false).Header, ",")}},
		"show ingest": {state.Printout(table.Options{}), []string{"table:" + strings.Join(ledger.StateTable("", ledger.State{}).Header, ","),
			"out:" + ledger.StateText(state.State)}},
		"show ingest -P, nothing yet": {IngestStatus{Cluster: "tb"}.Printout(table.Options{Parsable: true}), []string{
			"err:nothing ingested into this ledger yet for cluster tb: run gpubridge ingest\n", "table:" + strings.Join(ledger.StateTable("", ledger.State{}).Header, ",")}},
		"add token":        {IssuedPrintout(issued, table.Options{}), []string{"out:gpb_secret\n", "err:" + token.Added(issued.Token)}},
		"add token --json": {IssuedPrintout(issued, table.Options{JSON: true}), []string{"raw"}},
		"credit run-once": {CreditPrintout(credit.Report{}, table.Options{}), []string{"err:" + credit.Summary(credit.Report{}),
			"table:" + strings.Join(credit.ReportTable(credit.Report{}).Header, ",")}},
		"show ratecard --json": {card.Printout(table.Options{JSON: true}), []string{"raw"}},
		"show ratecard -P": {card.Printout(table.Options{Parsable: true}), []string{
			"err:show ratecard: the rates table (show rates); without -P, -p, format= and where the card as YAML\n", "table:" + strings.Join(card.Table().Header, ",")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, shape(tc.p)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	doc := card.Printout(table.Options{})
	if want, _ := ratecard.Document(card.Card); doc.Err != nil || len(doc.Parts) != 1 || doc.Parts[0].Text != want || !strings.Contains(want, "currency: EUR") {
		t.Errorf("show ratecard: %+v, want the YAML document %q", doc, want)
	}
}

func TestResultTexts(t *testing.T) {
	nov, _ := meter.ParsePeriod("2026-11")
	price, _ := pricing.ParsePrice("2.10")
	from, _ := pricing.ParseDate("2026-01-01")
	for got, want := range map[string]string{
		Migrated{sqldb.Schema{Database: "gb", Kind: sqldb.Empty, Pending: 12}}.Text():                                          "database gb: was empty; created gpubridge's schema (12 migrations)\n",
		Migrated{sqldb.Schema{Database: "gb", Kind: sqldb.Gpubridge, Applied: 10, Pending: 2}}.Text():                          "database gb: applied 2 pending migrations (12 in all)\n",
		Migrated{sqldb.Schema{Database: "gb", Kind: sqldb.Gpubridge, Applied: 12}}.Text():                                      "database gb: schema is current (12 migrations)\n",
		ClosedPeriod{Period: nov, Record: ledger.PeriodRecord{Lines: 3, GPUSeconds: 7200, Currency: "EUR"}}.Text():             "closed 2026-11: 3 lines, 7200 GPU-seconds, 0 EUR\n",
		AddedRate{Rate: pricing.Rate{Type: "h100", PerGPUHour: price, From: from}, Card: pricing.Card{Currency: "CHF"}}.Text(): "rate h100 (reserved and ondemand): 2.10 CHF per GPU-hour from 2026-01-01\n",
		LoadedCard{Changed: false}.Text(): "rate card unchanged\n",
		RateKey{}.Removed():               "rate removed\n",
		SQLScript("SELECT 1;\n").Text():   "SELECT 1;\n",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// TestRefusedBeforeAnythingOpens: what a command's parser refuses of its
// keys is an input error, found before the use case reads the
// configuration.
func TestRefusedBeforeAnythingOpens(t *testing.T) {
	_, delErr := ParseTokenKey(map[string]string{"tenant": "acme"})
	_, loadErr := ParseLoadRateCard("", map[string]string{})
	_, twoErr := ParseLoadRateCard("a.yaml", map[string]string{"file": "b.yaml"})
	// The two files are refused before period= is read.
	_, exportErr := ParseExportChargeback(map[string]string{"file": "b.csv"}, false, "a.csv")
	for msg, err := range map[string]error{
		token.DeleteUsage:                                    delErr,
		"load ratecard needs -f FILE":                        loadErr,
		"-f a.yaml and file=b.yaml name two files; give one": twoErr,
		"-f a.csv and file=b.csv name two files":             exportErr,
	} {
		if err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, ErrInput) {
			t.Errorf("err = %v, want an input error saying %q", err, msg)
		}
	}
}

func TestFileArg(t *testing.T) {
	cases := map[string]struct {
		flag  string
		where map[string]string
		want  string
		err   bool
	}{
		"neither":        {"", map[string]string{}, "", false},
		"-f":             {"a", map[string]string{}, "a", false},
		"file=":          {"", map[string]string{"file": "b"}, "b", false},
		"both, the same": {"a", map[string]string{"file": "a"}, "a", false},
		"both, two":      {"a", map[string]string{"file": "b"}, "", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseFileArg(tc.flag, tc.where)
			if got != tc.want || (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrInput)) {
				t.Errorf("ParseFileArg = %q, %v; want %q, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}
