package view

import (
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/table"
)

// Tenant describes a tenant for a confirmation (add tenant, import): the
// title, the name, and the settings that are set.
func Tenant(title string, t tenant.Tenant) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  %s\n Settings\n", title, t.Name)
	for _, f := range tenant.Fields(t)[1:] {
		if f.Value == "" || f.Key == "adopted" || (f.Key == "burstmaxgpus" && f.Value == "0") {
			continue
		}
		fmt.Fprintf(&b, "  %-13s= %s\n", f.Title, f.Value)
	}
	return b.String()
}

// Changes describes the field changes of tenant name for a confirmation
// (modify tenant, add/delete user), old -> new.
func Changes(title string, name string, cs []tenant.FieldChange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  %s\n", title, name)
	for _, c := range cs {
		fmt.Fprintf(&b, "  %-13s %s -> %s\n", c.Title, orNone(c.Old), orNone(c.New))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Inline describes a tenant on one line: its settings that are set, as
// Title=value.
func Inline(t tenant.Tenant) string {
	var parts []string
	for _, f := range tenant.Fields(t)[1:] {
		if f.Value == "" || f.Key == "burst" && f.Value == "no" || f.Key == "burstmaxgpus" && f.Value == "0" {
			continue
		}
		parts = append(parts, f.Title+"="+f.Value)
	}
	return strings.Join(parts, " ")
}

// Columns are the columns show tenants prints without format=.
var Columns = []string{"name", "description", "gpus", "users", "admins", "cpus", "memory", "burst", "state"}

// Tenants is the table of show tenants: the columns cols of each tenant,
// and the full records for --json.
func Tenants(ts []tenant.Tenant, cols []string) table.Table {
	t := table.Table{Raw: ts}
	if ts == nil {
		t.Raw = []tenant.Tenant{}
	}
	for _, c := range cols {
		for _, f := range tenant.Fields(tenant.Tenant{}) {
			if f.Key == c {
				t.Header = append(t.Header, f.Title)
				t.Keys = append(t.Keys, f.Key)
			}
		}
	}
	for _, tn := range ts {
		var row []string
		fs := tenant.Fields(tn)
		for _, c := range cols {
			for _, f := range fs {
				if f.Key == c {
					row = append(row, f.Value)
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
