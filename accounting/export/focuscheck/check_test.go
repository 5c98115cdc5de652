package focuscheck

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyValue(t *testing.T) {
	cases := map[string]struct {
		in    string
		kinds string // key:kind,...
		errs  int
	}{
		"scalars":       {`{"a":"x","b":1.5,"c":true,"d":null}`, "a:string,b:number,c:bool,d:null", 0},
		"empty object":  {`{}`, "", 0},
		"duplicate key": {`{"a":1,"a":2}`, "a:number,a:number", 1},
		"object value":  {`{"a":{"b":[1,{"c":2}]},"z":1}`, "a:object,z:number", 1},
		"array value":   {`{"a":[1]}`, "a:array", 1},
		"not an object": {`["a"]`, "", 1},
		"trailing":      {`{"a":1} {}`, "a:number", 1},
		"broken":        {`{"a":`, "", 1},
		"string":        {`"a"`, "", 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps, errs := keyValue(tc.in)
			var kinds []string
			for _, p := range ps {
				kinds = append(kinds, p.key+":"+p.kind)
			}
			if d := cmp.Diff(tc.kinds, strings.Join(kinds, ",")); d != "" || len(errs) != tc.errs {
				t.Errorf("pairs (-want +got)\n%s errors %v, want %d", d, errs, tc.errs)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	for v, want := range map[string]bool{
		"-100.2": true, "-3": true, "4": true, "35.2E-7": true, "1.234": true, "0.00": true,
		"1 1/2": false, "35.2E+7": false, "+333": false, "3,432,342": false, "$32": false, "32 GiB": false, "": false, ".5": false, "1.": false,
	} {
		if numeric.MatchString(v) != want {
			t.Errorf("numeric %q: %v, want %v", v, !want, want)
		}
	}
	for v, want := range map[string]bool{
		"GPU-Hours": true, "GB": true, "Seconds": true, "GB/Hour": true, "1000 Tokens": true, "Units/3 Months": true,
		"gigabyte-seconds": false, "GPU Hours": false, "GPU-hours": false,
	} {
		if unitFormat.MatchString(v) != want {
			t.Errorf("unit %q: %v, want %v", v, !want, want)
		}
	}
	for v, want := range map[string]bool{
		"2026-11-01T00:00:00Z": true, "2026-11-01 00:00:00": false, "2026-11-01T00:00:00+00:00": false, "2026-11-01T00:00:00.5Z": false, "2026-11-01": false,
	} {
		if dateTime.MatchString(v) != want {
			t.Errorf("datetime %q: %v, want %v", v, !want, want)
		}
	}
}

// TestMinimalDataset: the smallest dataset that follows the rules passes;
// a Credit's ListCost must match its BilledCost; metadata rules apply to
// values.
func TestMinimalDataset(t *testing.T) {
	head := "BilledCost,BillingAccountId,BillingAccountName,BillingCurrency,BillingPeriodEnd,BillingPeriodStart,ChargeCategory,ChargeClass," +
		"ChargeDescription,ChargePeriodEnd,ChargePeriodStart,ContractedCost,EffectiveCost,InvoiceIssuerName,ListCost,PricingQuantity,PricingUnit," +
		"ProviderName,PublisherName,ServiceCategory,ServiceName,ChargeFrequency,InvoiceId,ServiceSubcategory\n"
	usage := "1.50,a,A,EUR,2026-12-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,,GPU,2026-11-02T00:00:00Z,2026-11-01T00:00:00Z,1.50,1.50,X,1.50,1,Hours,X,X,Compute,S,Usage-Based,,Other (Compute)\n"
	credit := "-1.00,a,A,EUR,2026-12-01T00:00:00Z,2026-11-01T00:00:00Z,Credit,,Promo,2026-12-01T00:00:00Z,2026-11-01T00:00:00Z,-1.00,-1.00,X,-0.50,,,X,X,Compute,S,One-Time,,Other (Compute)\n"
	vs, err := Check(strings.NewReader(head+usage), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Violation{{Level: Should, Rule: "metadata: FOCUS Metadata SHOULD be provided (a file beside the data)"}}, vs); d != "" {
		t.Errorf("minimal dataset (-want +got)\n%s", d)
	}
	vs, _ = Check(strings.NewReader(head+credit), Options{})
	if len(Musts(vs)) != 1 || Musts(vs)[0].Rule != "listcost: MUST match BilledCost for a Credit" {
		t.Errorf("credit: %v", vs)
	}
}
