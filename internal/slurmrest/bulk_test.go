package slurmrest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBulkErrorIsShort: a refused bulk request of 3,000 associations whose
// answer holds 3,000 errors gives an error of a few hundred bytes that
// quotes the first errors, counts them, and names the objects they
// mention (not one that is only a prefix of a mentioned name).
func TestBulkErrorIsShort(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"errors":[`)
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"error_number":2,"error":"Unable to add association for user u%04d: %s","source":"_foreach_update_assoc"}`, i, strings.Repeat("x", 200))
	}
	b.WriteString(`]}`)
	answer := b.String()
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, answer)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	var specs []AssociationSpec
	for i := range 3000 {
		specs = append(specs, AssociationSpec{Account: "acme", User: fmt.Sprintf("u%04d", i)})
	}
	specs = append(specs, AssociationSpec{Account: "acme", User: "u000"}) // a prefix of u0001: not mentioned
	err := c.SetAssociationsKnown(context.Background(), specs, func(string) bool { return true })
	var be *BulkError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v (%T); want a *BulkError", err, err)
	}
	msg := err.Error()
	if len(msg) > 1500 {
		t.Errorf("error is %d bytes; want a short one: %.300s...", len(msg), msg)
	}
	for _, want := range []string{"set associations (250 object(s) in one request): 3000 Slurm error(s)", "user u0000", "and 2997 more",
		"[concerning u0000, u0001, u0002, u0003, u0004 and 15 more]", "nothing of this request was written"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "u000,") || strings.Contains(msg, "u000 ") || strings.Contains(msg, "u000]") {
		t.Errorf("error names u000, which no Slurm error mentions:\n%s", msg)
	}
	if !be.Refused() {
		t.Error("Refused() = false for an answer with Slurm errors")
	}
	var se *SlurmError
	if !errors.As(err, &se) || len(se.Errors) != 3000 {
		t.Errorf("errors.As(*SlurmError) lost the details")
	}
}

// TestBulkErrorNotRefused: slurmdbd unreachable is not a refusal of the
// objects (sending fewer would not help).
func TestBulkErrorNotRefused(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"errors":[{"error_number":7000,"error":"Unable to connect to database","source":"db"}]}`)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	err := c.SetQOS(context.Background(), []QOSSpec{{Name: "q1", New: true}})
	var be *BulkError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v; want a *BulkError", err)
	}
	if be.Refused() {
		t.Errorf("Refused() = true for %v", err)
	}
}

// TestDeleteAccountsPipelined: first one DELETE associations/ naming the
// accounts (on the client's cluster), then one DELETE per account, at
// most PipelineDepth at once; a refused one does not stop the others and
// is named in a short *PipelineError; root is refused before anything is
// sent.
func TestDeleteAccountsPipelined(t *testing.T) {
	var inFlight, most, n atomic.Int32
	var mu sync.Mutex
	seen := map[string]bool{}
	var assocQueries []string
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		cur := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if cur <= m || most.CompareAndSwap(m, cur) {
				break
			}
		}
		if strings.HasSuffix(r.URL.Path, "/associations/") {
			mu.Lock()
			assocQueries = append(assocQueries, r.Method+" "+r.URL.Query().Get("account")+" cluster="+r.URL.Query().Get("cluster"))
			mu.Unlock()
			io.WriteString(w, `{"removed_associations":[]}`)
			return
		}
		n.Add(1)
		time.Sleep(2 * time.Millisecond) // long enough for the requests to overlap
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		mu.Lock()
		seen[name] = true
		mu.Unlock()
		if r.Method != http.MethodDelete {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		if name == "a0007" || name == "a0042" {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"errors":[{"error_number":1,"error":"Job(s) active, cancel job(s) before remove","source":"_delete_account"}]}`)
			return
		}
		io.WriteString(w, `{"removed_accounts":["`+name+`"]}`)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	var names []string
	for i := range 100 {
		names = append(names, fmt.Sprintf("a%04d", i))
	}
	ctx := context.Background()
	if err := c.DeleteAccounts(ctx, append(names[:2:2], "root")); !errors.Is(err, ErrInvalid) || n.Load() != 0 {
		t.Fatalf("with root: err = %v after %d requests; want ErrInvalid before any", err, n.Load())
	}
	err := c.DeleteAccounts(ctx, names)
	var pe *PipelineError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v; want a *PipelineError", err)
	}
	if got := strings.Join(pe.NotWritten(), ","); got != "a0007,a0042" {
		t.Errorf("NotWritten = %s", got)
	}
	if want := []string{"DELETE " + strings.Join(names, ",") + " cluster=fake"}; strings.Join(assocQueries, "\n") != strings.Join(want, "\n") {
		t.Errorf("associations deleted with %q; want %q", assocQueries, want)
	}
	if n.Load() != 100 || len(seen) != 100 {
		t.Errorf("%d requests for %d accounts; want one each", n.Load(), len(seen))
	}
	if m := most.Load(); m > PipelineDepth || m < 2 {
		t.Errorf("at most %d requests in flight; want 2..%d", m, PipelineDepth)
	}
	if msg := err.Error(); len(msg) > 1000 || !strings.Contains(msg, "delete accounts: 2 of 100 object(s) not written") || !strings.Contains(msg, "[not written: a0007, a0042]") {
		t.Errorf("error: %s", msg)
	}
}

// TestPipelineStopsWhenUnreachable: when slurmrestd stops answering, no
// more requests are sent and the error says how far it got.
func TestPipelineStopsWhenUnreachable(t *testing.T) {
	var n atomic.Int32
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 10 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		io.WriteString(w, `{}`)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, func(o *Options) { o.Retries = 0 })
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("q%04d", i))
	}
	err := c.DeleteQOSNames(context.Background(), names)
	if err == nil || !strings.Contains(err.Error(), "delete QOS: stopped after") {
		t.Fatalf("err = %v", err)
	}
	var pe *PipelineError
	if errors.As(err, &pe) {
		t.Errorf("an unreachable slurmrestd reported as objects refused: %v", err)
	}
	if got := n.Load(); got > 10+2*PipelineDepth {
		t.Errorf("%d requests sent; want the pipeline to stop soon after the failures", got)
	}
}
