package sqldb

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	ours := []int64{1, 100, 200}
	type want struct {
		Kind             Kind
		Applied, Pending int
	}
	cases := map[string]struct {
		tables  []string
		applied []int64
		want    want
	}{
		"no tables":                     {nil, nil, want{Empty, 0, 3}},
		"goose table only, nothing run": {[]string{versionTable}, []int64{0}, want{Empty, 0, 3}},
		"goose table only, empty":       {[]string{versionTable}, nil, want{Empty, 0, 3}},
		"current":                       {[]string{"audit_log", versionTable, "tenants"}, []int64{0, 1, 100, 200}, want{Gpubridge, 3, 0}},
		"behind":                        {[]string{"audit_log", versionTable}, []int64{0, 1}, want{Gpubridge, 1, 2}},
		"someone else's tables":         {[]string{"users", "orders"}, nil, want{Foreign, 0, 3}},
		"slurm_acct_db":                 {[]string{"acct_table", "qos_table", "tres_table"}, nil, want{Foreign, 0, 3}},
		"another goose project":         {[]string{versionTable, "widgets"}, []int64{0, 20240101}, want{Foreign, 0, 3}},
		"goose table with foreign runs": {[]string{versionTable}, []int64{0, 7}, want{Foreign, 0, 3}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.Kind, got.Applied, got.Pending = classify(c.tables, c.applied, ours)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("classify (-want +got):\n%s", d)
			}
		})
	}
}

func TestEmbeddedVersions(t *testing.T) {
	vs, err := versions()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 || vs[0] != 1 {
		t.Fatalf("versions = %v; want the audit log (1) first", vs)
	}
}
