package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetAccountsBody: one GET accounts/ (existence), then one POST
// accounts/ with whole records, coordinators always present.
func TestSetAccountsBody(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	var body map[string]any
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		switch r.Method {
		case http.MethodGet:
			io.WriteString(w, `{"accounts":[{"name":"acme","description":"x","organization":"y","coordinators":[{"name":"old","direct":true}]},
				{"name":"globex","description":"g","organization":"g"},{"name":"gone","description":"g","organization":"g","flags":["DELETED"]}]}`)
		case http.MethodPost:
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Errorf("body: %v", err)
			}
			io.WriteString(w, `{}`)
		}
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	ctx := context.Background()

	// Empty input: no request at all.
	before := c.Stats()
	if err := c.SetAccounts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.SetAccounts(ctx, []Account{}); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st != before || len(calls) != 0 {
		t.Errorf("empty SetAccounts sent requests: %v (stats %+v -> %+v)", calls, before, st)
	}

	before = c.Stats()
	err := c.SetAccounts(ctx, []Account{
		{Name: "acme", Description: "Acme", Organization: "acme-corp", Coordinators: []string{"alice", "bob", "alice"}},
		{Name: "globex"}, // no coordinators: the list is sent empty (clears them)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GET /slurmdb/v0.0.44/accounts/", "POST /slurmdb/v0.0.44/accounts/"}; !cmp.Equal(want, calls) {
		t.Errorf("calls = %q, want %q", calls, want)
	}
	if st := c.Stats(); st.Writes-before.Writes != 1 || st.Reads-before.Reads != 1 {
		t.Errorf("stats %+v -> %+v, want one read and one write", before, st)
	}
	want := map[string]any{"accounts": []any{
		map[string]any{"name": "acme", "description": "Acme", "organization": "acme-corp",
			"coordinators": []any{map[string]any{"name": "alice"}, map[string]any{"name": "bob"}}},
		map[string]any{"name": "globex", "description": "globex", "organization": "globex", "coordinators": []any{}},
	}}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("POST body (-want +got):\n%s", diff)
	}

	// Missing (or deleted) accounts: ErrNotFound, nothing written.
	calls, body = nil, nil
	before = c.Stats()
	err = c.SetAccounts(ctx, []Account{{Name: "acme"}, {Name: "nobody"}, {Name: "gone"}})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nobody,gone") {
		t.Errorf("SetAccounts(missing) = %v, want ErrNotFound naming nobody,gone", err)
	}
	if w := c.Stats().Writes - before.Writes; w != 0 || body != nil {
		t.Errorf("%d writes for a refused SetAccounts", w)
	}

	// Invalid input: no request.
	calls = nil
	for name, in := range map[string][]Account{
		"empty name":        {{Name: ""}},
		"duplicate":         {{Name: "acme"}, {Name: "acme"}},
		"empty coordinator": {{Name: "acme", Coordinators: []string{""}}},
	} {
		if err := c.SetAccounts(ctx, in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if len(calls) != 0 {
		t.Errorf("invalid input sent %q", calls)
	}
}
