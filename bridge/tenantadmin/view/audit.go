package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// TenantAudit says in one line what an audit row of a tenant changed
// (show audit): before and after are the tenant's JSON (nil: none).
func TenantAudit(before, after *string) string {
	var b, a tenant.Tenant
	if before != nil {
		_ = json.Unmarshal([]byte(*before), &b)
	}
	if after != nil {
		_ = json.Unmarshal([]byte(*after), &a)
	}
	switch {
	case before == nil && after != nil:
		return Inline(a)
	case after == nil:
		return "removed"
	}
	var parts []string
	for _, c := range tenant.Changes(b, a) {
		parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Title, orNone(c.Old), orNone(c.New)))
	}
	return strings.Join(parts, "; ")
}

// ValueAudit says in one line what an audit row of a kind without a
// summary of its own changed: the values as they are, old -> new.
func ValueAudit(before, after *string) string {
	switch {
	case before == nil && after != nil:
		return *after
	case after != nil:
		return *before + " -> " + *after
	case before != nil:
		return "was " + *before
	}
	return ""
}
