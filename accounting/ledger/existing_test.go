package ledger

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// captureQ records the queries loadExisting sends and answers each with
// errCaptured (only QueryContext is used; the rest of q panics if called).
type captureQ struct {
	q
	queries []string
	args    [][]any
}

var errCaptured = errors.New("captured")

func (c *captureQ) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	c.queries = append(c.queries, query)
	c.args = append(c.args, args)
	return nil, errCaptured
}

var (
	lookupHead  = regexp.MustCompile(`^SELECT .* FROM usage_ledger WHERE cluster = (\?|'[^']*') AND \((.*)\)$`)
	rangeTerm   = regexp.MustCompile(`^job_id BETWEEN (\?|\d+) AND (\?|\d+)$`)
	inTerm      = regexp.MustCompile(`^job_id IN \(((?:\?|\d+)(?:,(?:\?|\d+))*)\)$`)
	errBadQuery = errors.New("bad query")
)

// evalLookup checks that query is a well-formed loadExisting lookup (each
// term of its disjunction a BETWEEN or an IN list, placeholders matching
// args) and returns the job ids in [lo, hi] that it selects.
func evalLookup(query string, args []any, lo, hi uint32) (map[uint32]bool, error) {
	m := lookupHead.FindStringSubmatch(query)
	if m == nil {
		return nil, errBadQuery
	}
	next := func(tok string) (uint32, error) {
		if tok != "?" {
			v, err := strconv.ParseUint(tok, 10, 32)
			return uint32(v), err
		}
		if len(args) == 0 {
			return 0, errBadQuery
		}
		v, ok := args[0].(uint32)
		args = args[1:]
		if !ok {
			return 0, errBadQuery
		}
		return v, nil
	}
	if m[1] == "?" {
		args = args[1:] // the cluster
	}
	var match []func(uint32) bool
	for _, term := range strings.Split(m[2], " OR ") {
		if r := rangeTerm.FindStringSubmatch(term); r != nil {
			a, err1 := next(r[1])
			b, err2 := next(r[2])
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			match = append(match, func(id uint32) bool { return a <= id && id <= b })
		} else if r := inTerm.FindStringSubmatch(term); r != nil {
			set := map[uint32]bool{}
			for _, tok := range strings.Split(r[1], ",") {
				v, err := next(tok)
				if err != nil {
					return nil, err
				}
				set[v] = true
			}
			match = append(match, func(id uint32) bool { return set[id] })
		} else {
			return nil, errBadQuery
		}
	}
	if len(args) != 0 {
		return nil, errBadQuery
	}
	got := map[uint32]bool{}
	for id := lo; id <= hi; id++ {
		if slices.ContainsFunc(match, func(f func(uint32) bool) bool { return f(id) }) {
			got[id] = true
		}
	}
	return got, nil
}

// lookupsOf runs loadExisting on runs of ids and returns its queries.
func lookupsOf(t *testing.T, ids []uint32) *captureQ {
	t.Helper()
	var runs []meter.MeasuredRun
	for _, id := range ids {
		runs = append(runs, meter.MeasuredRun{Run: meter.Run{Key: meter.RunKey{Cluster: "c", JobID: id, Submit: 1}}})
	}
	c := &captureQ{}
	if _, err := loadExisting(context.Background(), c, "c", runs); !errors.Is(err, errCaptured) {
		t.Fatalf("loadExisting: %v, want the captured query", err)
	}
	return c
}

// TestLoadExistingIsolatedThenRange is issue 25 item 10: the batch's
// lowest ids are isolated and a later group is a range. The lookup used to
// read "AND ( OR job_id BETWEEN 700300 AND 700301 OR job_id IN
// (700103,700260))" (Error 1064, every ingest of the window failed).
func TestLoadExistingIsolatedThenRange(t *testing.T) {
	cases := map[string][]uint32{
		"seen on the testbed":  {700103, 700260, 700300, 700301},
		"single then range":    {1, 100, 101},
		"range then single":    {1, 2, 100},
		"singles only":         {1, 100, 1000},
		"range only":           {5, 6, 7},
		"one id":               {42},
		"single range single":  {1, 100, 101, 1000},
		"range single range":   {1, 2, 100, 1000, 1001},
		"two singles 2 ranges": {10, 200, 300, 301, 400, 401},
	}
	for name, ids := range cases {
		t.Run(name, func(t *testing.T) {
			c := lookupsOf(t, ids)
			if len(c.queries) != 1 {
				t.Fatalf("%d queries, want 1", len(c.queries))
			}
			got, err := evalLookup(c.queries[0], c.args[0], ids[0]-min(ids[0], 64), ids[len(ids)-1]+64)
			if err != nil {
				t.Fatalf("%v: %s %v", err, c.queries[0], c.args[0])
			}
			for _, id := range ids {
				if !got[id] {
					t.Errorf("id %d not selected by %s %v", id, c.queries[0], c.args[0])
				}
			}
		})
	}
}
