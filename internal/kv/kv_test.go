package kv

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	spec := Spec{Keys: []string{"gpus", "users"}, SetKeys: []string{"gpus"}}
	cases := map[string]struct {
		in      []string
		want    Args
		wantErr string
	}{
		"names and pairs": {in: []string{"acme", "GPUs=h100:16", "users=Alice,bob"},
			want: Args{Names: []string{"acme"}, Where: map[string]string{"gpus": "h100:16", "users": "Alice,bob"}, Set: map[string]string{}}},
		"set clause": {in: []string{"acme", "set", "gpus=h100:24"},
			want: Args{Names: []string{"acme"}, Where: map[string]string{}, Set: map[string]string{"gpus": "h100:24"}}},
		"value with =": {in: []string{"users=a=b"},
			want: Args{Where: map[string]string{"users": "a=b"}, Set: map[string]string{}}},
		"unknown key":     {in: []string{"acme", "gpu=1"}, wantErr: `unknown option "gpu" (did you mean gpus?); known options: gpus, users`},
		"far unknown key": {in: []string{"acme", "quota=1"}, wantErr: `unknown option "quota"; known options: gpus, users`},
		"unknown set key": {in: []string{"acme", "set", "users=x"}, wantErr: `unknown option "users"; known options: gpus`},
		"dup":             {in: []string{"gpus=1", "gpus=2"}, wantErr: `option "gpus" given twice`},
		"empty set":       {in: []string{"acme", "set"}, wantErr: "`set` needs at least one key=value"},
		"name after pair": {in: []string{"gpus=1", "acme"}, wantErr: `"acme": expected key=value here`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.in, spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	if _, err := Parse([]string{"x", "set", "gpus=1"}, Spec{Keys: []string{"gpus"}}); err == nil {
		t.Error("set without SetKeys: want error")
	}
}

func TestParseMissingSet(t *testing.T) {
	spec := Spec{Keys: []string{}, SetKeys: []string{"gpus", "users"}}
	_, err := Parse([]string{"acme", "gpus=h100:2", "users=a"}, spec)
	var ms *MissingSetError
	if !errors.As(err, &ms) {
		t.Fatalf("want a MissingSetError, got %v", err)
	}
	if d := cmp.Diff([]string{"acme", "set", "gpus=h100:2", "users=a"}, ms.Fixed); d != "" {
		t.Errorf("fixed (-want +got)\n%s", d)
	}
	if want := "the changes go after `set`: acme set gpus=h100:2 users=a"; !strings.Contains(err.Error(), want) {
		t.Errorf("%v: want %q", err, want)
	}
}

func TestParseColumns(t *testing.T) {
	spec := Spec{Keys: []string{"tenant", "period"}, Columns: []string{"period", "status", "tenant", "gpuType", "gpuSeconds"}}
	got, err := Parse([]string{"where", "tenant=acme", "GPUType=h100,1g.10gb", "status=open", "format=Tenant,GPUType"}, spec)
	if err != nil {
		t.Fatal(err)
	}
	want := Args{Where: map[string]string{"tenant": "acme"}, Set: map[string]string{},
		Format: []string{"tenant", "gputype"}, Filters: map[string]string{"gputype": "h100,1g.10gb", "status": "open"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	for in, wantErr := range map[string]string{
		"peroid=2026-10":       `unknown option or column "peroid" (did you mean period?); options: tenant, period; columns (format= and where filters): period,status,tenant,gpuType,gpuSeconds`,
		"gpusecond=1":          `unknown option or column "gpusecond" (did you mean gpuSeconds?)`,
		"format=":              "format=: name the columns, e.g. format=period,status",
		"format=tenant,gputyp": "format=gputyp: no such column (did you mean gpuType?); columns: period,status,tenant,gpuType,gpuSeconds",
		"format=tenant%x":      "format=tenant%x: after % give the column's width, e.g. tenant%20 (right-justified) or tenant%-20 (left-justified)",
		"format=tenant%0":      "format=tenant%0: after % give the column's width",
		"format=tenan%20":      "format=tenan: no such column (did you mean tenant?)",
	} {
		if _, err := Parse([]string{in}, spec); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want %q", in, err, wantErr)
		}
	}
	if got, err := Parse([]string{"format=Tenant%20,gpuType%-8"}, spec); err != nil || !slices.Equal(got.Format, []string{"tenant%20", "gputype%-8"}) {
		t.Errorf("format= with widths: %v, %v", got.Format, err)
	}
	if _, err := Parse([]string{"format=a"}, Spec{Keys: []string{"tenant"}}); err == nil {
		t.Error("format= without Columns: want an error")
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"tenant", "period", "account", "listen", "gputype", "gpus"}
	for word, want := range map[string]string{
		"tennat": "tenant", "PERIOD": "period", "acount": "account", "listne": "listen", "gpu": "gpus",
		"acc": "account", "zzz": "", "quota": "", "": "", "gpusx": "gpus",
	} {
		if got := Suggest(word, keys); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestList(t *testing.T) {
	if d := cmp.Diff([]string{"a", "b"}, List(" a, ,b,")); d != "" {
		t.Error(d)
	}
}
