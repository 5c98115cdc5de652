package kv

import (
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
		"unknown key":     {in: []string{"acme", "gpu=1"}, wantErr: `unknown option "gpu"; known options: gpus, users`},
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

func TestList(t *testing.T) {
	if d := cmp.Diff([]string{"a", "b"}, List(" a, ,b,")); d != "" {
		t.Error(d)
	}
}
