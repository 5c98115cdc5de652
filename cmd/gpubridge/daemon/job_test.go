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

func quiet() *slog.Logger {
	if os.Getenv("DAEMON_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

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

// blockJob runs until released, counting its starts.
type blockJob struct {
	n       atomic.Int32
	started chan struct{}
	release chan struct{}
}

func (j *blockJob) Name() string { return "block" }
func (j *blockJob) Run(ctx context.Context) error {
	j.n.Add(1)
	j.started <- struct{}{}
	<-j.release
	return nil
}

// A job is not started again while it still runs: the scheduler wraps every
// entry in SkipIfStillRunning. Driven through the cron entry itself, with no
// clock, so the test cannot race a schedule.
func TestSkipIfStillRunning(t *testing.T) {
	j := &blockJob{started: make(chan struct{}, 2), release: make(chan struct{})}
	s, err := NewScheduler([]Scheduled{{"@every 1h", j}}, quiet(), nil)
	if err != nil {
		t.Fatal(err)
	}
	entries := s.cron.Entries()
	if len(entries) != 1 {
		t.Fatalf("%d cron entries, want 1", len(entries))
	}
	run := entries[0].WrappedJob
	done := make(chan struct{})
	go func() { run.Run(); close(done) }()
	<-j.started // the first run is in its body
	defer func() {
		select {
		case <-j.release:
		default:
			close(j.release)
		}
	}()
	// A second tick while it runs: it must return without starting the body.
	second := make(chan struct{})
	go func() { run.Run(); close(second) }()
	select {
	case <-second:
	case <-j.started:
		t.Fatal("job started again while its first run was still going; want it skipped")
	}
	close(j.release)
	<-done
	go run.Run() // once the first has finished, the next tick runs again
	<-j.started
	if n := j.n.Load(); n != 2 {
		t.Fatalf("after the first run ended, starts = %d; want 2", n)
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
