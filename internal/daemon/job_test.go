package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type countJob struct {
	name  string
	n     atomic.Int32
	err   error
	sleep time.Duration
}

func (j *countJob) Name() string { return j.name }
func (j *countJob) Run(ctx context.Context) error {
	j.n.Add(1)
	select {
	case <-time.After(j.sleep):
	case <-ctx.Done():
	}
	return j.err
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRunOnceMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ok, bad := &countJob{name: "ok"}, &countJob{name: "bad", err: errors.New("boom")}
	s, err := NewScheduler([]Scheduled{{"@every 1h", ok}, {"", bad}}, quiet(), m)
	if err != nil {
		t.Fatal(err)
	}
	s.RunOnce(ok)
	s.RunOnce(bad)
	s.RunOnce(bad)
	if got := testutil.ToFloat64(m.runs.WithLabelValues("ok", "ok")); got != 1 {
		t.Errorf("ok runs = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues("bad", "error")); got != 2 {
		t.Errorf("bad error runs = %v, want 2", got)
	}
}

func TestBadSpec(t *testing.T) {
	_, err := NewScheduler([]Scheduled{{"every so often", &countJob{name: "x"}}}, quiet(), nil)
	if err == nil || !strings.Contains(err.Error(), "schedule job x") {
		t.Fatalf("want error naming the job, got %v", err)
	}
}

// A slow job is not started again while it still runs.
func TestSkipIfStillRunning(t *testing.T) {
	j := &countJob{name: "slow", sleep: 2500 * time.Millisecond}
	s, err := NewScheduler([]Scheduled{{"@every 1s", j}}, quiet(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	time.Sleep(3200 * time.Millisecond)
	s.Stop()
	if n := j.n.Load(); n != 1 {
		t.Fatalf("slow job ran %d times in 3.2s with a 2.5s body on @every 1s; want 1 (skip while running)", n)
	}
}

func TestSdNotify(t *testing.T) {
	dir, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "n.sock")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	if err := SdNotify("READY=1"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	l.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := l.Read(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
}
