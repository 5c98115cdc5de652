package sqldb

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitDSN(t *testing.T) {
	cases := map[string]struct {
		dsn  string
		want []string
	}{
		"one":                   {"u:p@tcp(db1:3306)/gpubridge?parseTime=true", []string{"u:p@tcp(db1:3306)/gpubridge?parseTime=true"}},
		"three":                 {"u:p@tcp(db1:3306)/g,u:p@tcp(db2:3306)/g, u:p@tcp(db3:3306)/g", []string{"u:p@tcp(db1:3306)/g", "u:p@tcp(db2:3306)/g", "u:p@tcp(db3:3306)/g"}},
		"comma in the password": {"u:a,b@tcp(db1:3306)/g", []string{"u:a,b@tcp(db1:3306)/g"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, SplitDSN(c.dsn)); diff != "" {
				t.Errorf("SplitDSN(%q) (-want +got):\n%s", c.dsn, diff)
			}
		})
	}
}

func TestRedactList(t *testing.T) {
	got := Redact("u:secret@tcp(db1:3306)/g,u:secret@tcp(db2:3306)/g")
	if want := "u:xxxxx@tcp(db1:3306)/g,u:xxxxx@tcp(db2:3306)/g"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

func TestConnectorOfNodes(t *testing.T) {
	c, err := Connector("u:p@tcp(db1:3306)/g,u:p@tcp(db2:3306)/g")
	if err != nil {
		t.Fatal(err)
	}
	n, ok := c.(*nodes)
	if !ok || !cmp.Equal(n.addrs, []string{"db1:3306", "db2:3306"}) || NodeOf(c) != "" {
		t.Fatalf("Connector of two nodes = %#v", c)
	}
	if one, _ := Connector("u:p@tcp(db1:3306)/g"); NodeOf(one) != "" {
		t.Fatal("a single DSN reports a node")
	}
}
