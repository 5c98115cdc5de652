package sqldb

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAuditEntryJSON: before and after are objects, not strings of JSON;
// an absent side is left out.
func TestAuditEntryJSON(t *testing.T) {
	before, after := `{"name":"acme","gpus":{"h100":2}}`, `not json`
	e := AuditEntry{ID: 7, At: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), Actor: "root", Action: "modify", ObjectKind: "tenant",
		ObjectName: "acme", Before: &before, After: &after}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":7,"at":"2026-12-01T08:00:00Z","actor":"root","action":"modify","objectKind":"tenant","objectName":"acme",` +
		`"before":{"name":"acme","gpus":{"h100":2}},"after":"not json"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	e.Before, e.After = nil, &before
	b, _ = json.Marshal(e)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["before"]; ok {
		t.Errorf("absent before is written: %s", b)
	}
	if _, ok := m["after"].(map[string]any); !ok {
		t.Errorf("after is not an object: %s", b)
	}
}
