package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpdateNode(t *testing.T) {
	var got []string
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
		if strings.HasSuffix(r.URL.Path, "/node/nope") {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"error_number": 2006, "error": "Invalid node name specified"}}})
			return
		}
		io.WriteString(w, `{"errors":[],"warnings":[]}`)
	}}
	c := testClient(t, startFake(t, f).URL, func(o *Options) { o.APIVersion = V44 })
	ctx := context.Background()
	if err := c.UpdateNode(ctx, "gpu-a", NodeDrain, "gpubridge: probe failed: exit 1"); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateNode(ctx, "gpu-a", NodeResume, ""); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`POST /slurm/v0.0.44/node/gpu-a {"state":["DRAIN"],"reason":"gpubridge: probe failed: exit 1"}`,
		`POST /slurm/v0.0.44/node/gpu-a {"state":["RESUME"]}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	var se *SlurmError
	if err := c.UpdateNode(ctx, "nope", NodeDown, "x"); !errors.As(err, &se) || !se.HasNumber(2006) {
		t.Errorf("unknown node: %v", err)
	}
	for name, call := range map[string]func() error{
		"no reason":   func() error { return c.UpdateNode(ctx, "gpu-a", NodeDrain, " ") },
		"bad state":   func() error { return c.UpdateNode(ctx, "gpu-a", "IDLE", "x") },
		"hostlist":    func() error { return c.UpdateNode(ctx, "gpu-[a-b]", NodeDrain, "x") },
		"two lines":   func() error { return c.UpdateNode(ctx, "gpu-a", NodeDrain, "a\nb") },
		"no node":     func() error { return c.UpdateNode(ctx, "", NodeResume, "") },
		"long reason": func() error { return c.UpdateNode(ctx, "gpu-a", NodeDown, strings.Repeat("x", 2000)) },
	} {
		if err := call(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if len(got) != 3 {
		t.Errorf("invalid updates reached the server: %v", got)
	}
}
