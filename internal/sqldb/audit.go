package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// AuditEntry is one row of the audit log: who changed what, from what, to what.
type AuditEntry struct {
	ID         int64     `db:"id" json:"id"`
	At         time.Time `db:"at" json:"at"`
	Actor      string    `db:"actor" json:"actor"`
	Action     string    `db:"action" json:"action"`
	ObjectKind string    `db:"object_kind" json:"objectKind"`
	ObjectName string    `db:"object_name" json:"objectName"`
	Before     *string   `db:"before_json" json:"before,omitempty"`
	After      *string   `db:"after_json" json:"after,omitempty"`
}

// Audit writes one audit row inside the caller's transaction, so the change
// and its record commit together. before and after are marshalled as JSON;
// nil means "did not exist".
func Audit(ctx context.Context, ex Execer, at time.Time, actor, action, kind, name string, before, after any) error {
	return AuditAll(ctx, ex, at, actor, action, kind, []Audited{{Name: name, Before: before, After: after}})
}

// Audited is one object of AuditAll: its name and its record before and
// after (nil: did not exist).
type Audited struct {
	Name          string
	Before, After any
}

// AuditAll writes one audit row per object, as Audit does, in multi-row
// inserts of up to 500 rows.
func AuditAll(ctx context.Context, ex Execer, at time.Time, actor, action, kind string, objs []Audited) error {
	for chunk := range slices.Chunk(objs, auditBatch) {
		rows := make([]AuditEntry, len(chunk))
		for i, o := range chunk {
			e := AuditEntry{At: at.UTC(), Actor: actor, Action: action, ObjectKind: kind, ObjectName: o.Name}
			var err error
			if e.Before, err = jsonPtr(o.Before); err != nil {
				return err
			}
			if e.After, err = jsonPtr(o.After); err != nil {
				return err
			}
			rows[i] = e
		}
		if _, err := ex.NamedExecContext(ctx, `INSERT INTO audit_log (at, actor, action, object_kind, object_name, before_json, after_json)
		VALUES (:at, :actor, :action, :object_kind, :object_name, :before_json, :after_json)`, rows); err != nil {
			return fmt.Errorf("write audit log: %w", err)
		}
	}
	return nil
}

const auditBatch = 500

func jsonPtr(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("audit: marshal: %w", err)
	}
	s := string(b)
	return &s, nil
}

// MarshalJSON writes before and after as the JSON objects they hold (not
// as strings of JSON), so that `show audit --json` and the API give the
// changed records as objects; a value that is not JSON stays a string.
func (e AuditEntry) MarshalJSON() ([]byte, error) {
	raw := func(s *string) any {
		switch {
		case s == nil:
			return nil
		case json.Valid([]byte(*s)):
			return json.RawMessage(*s)
		}
		return *s
	}
	type entry AuditEntry // without this method
	return json.Marshal(struct {
		entry
		Before any `json:"before,omitempty"`
		After  any `json:"after,omitempty"`
	}{entry(e), raw(e.Before), raw(e.After)})
}
