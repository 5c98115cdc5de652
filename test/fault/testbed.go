package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// Ports of the testbed's daemons (test/testbed/README.md).
var ports = map[string]string{
	"mariadb": "127.0.0.1:3306", "slurmdbd": "127.0.0.1:6819", "slurmctld": "127.0.0.1:6817", "slurmrestd": "127.0.0.1:6820",
}

// Daemon controls one testbed daemon (mariadb, slurmdbd, slurmctld,
// slurmrestd) for a test.
type Daemon struct {
	t    testing.TB
	env  testbed.Env
	Name string
}

// NewDaemon returns the control of a daemon. Whatever the test does, the
// daemon runs again when it ends.
func NewDaemon(t testing.TB, env testbed.Env, name string) *Daemon {
	t.Helper()
	if ports[name] == "" {
		t.Fatalf("fault: unknown daemon %q", name)
	}
	d := &Daemon{t: t, env: env, Name: name}
	t.Cleanup(func() {
		if !d.Up() {
			if err := d.run("start"); err != nil {
				t.Errorf("fault: restart %s after the test: %v", name, err)
			}
		}
	})
	return d
}

func (d *Daemon) run(op string) error {
	script := filepath.Join(filepath.Dir(d.env.ExecScript), "daemon.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, script, op, d.Name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s %s: %w: %s", script, op, d.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Up says whether the daemon accepts connections.
func (d *Daemon) Up() bool {
	c, err := net.DialTimeout("tcp", ports[d.Name], time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Kill kills the daemon with SIGKILL, as a crash would, and waits until it
// is gone and its port refuses connections. Safe to call from another
// goroutine (errors are reported, not fatal).
func (d *Daemon) Kill() { d.down("kill") }

// Stop stops the daemon with SIGTERM, as Kill.
func (d *Daemon) Stop() { d.down("stop") }

func (d *Daemon) down(op string) {
	if err := d.run(op); err != nil {
		d.t.Errorf("fault: %v", err)
		return
	}
	// daemon.sh returns when the process is a zombie, but the zombie
	// leader of a threaded daemon may still hold its listening socket
	// (other threads exit later), and the kernel accepts connections on it.
	for end := time.Now().Add(30 * time.Second); d.Up(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			d.t.Errorf("fault: %s %s: its port %s still accepts connections after 30 s", op, d.Name, ports[d.Name])
			return
		}
	}
}

// Start starts the daemon (when it is not running) and waits until it
// listens.
func (d *Daemon) Start() {
	if d.Up() {
		return
	}
	if err := d.run("start"); err != nil {
		d.t.Errorf("fault: %v", err)
	}
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// ScratchDB creates an empty, migrated database gpubridge_<prefix>_<name>_<random>
// beside gpubridge's own (the testbed's gpubridge user may create
// gpubridge_* databases) and drops it when the test ends. It returns the
// handle and its DSN.
func ScratchDB(t testing.TB, env testbed.Env, prefix, name string) (*sqlx.DB, string) {
	t.Helper()
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env` after `make testbed-up`")
	}
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	dbName := fmt.Sprintf("gpubridge_%s_%s_%06d", prefix, strings.Trim(nonWord.ReplaceAllString(strings.ToLower(name), "_"), "_"), rand.IntN(1e6))
	if len(dbName) > 64 {
		dbName = dbName[:64]
	}
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+dbName+"`"); err != nil {
		t.Fatalf("create scratch database: %v", err)
	}
	cfg.DBName = dbName
	dsn := cfg.FormatDSN()
	db, err := sqldb.OpenMigrated(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		admin, err := sqldb.Open(context.Background(), env.DBDSN)
		if err != nil {
			t.Errorf("drop scratch database: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+dbName+"`"); err != nil {
			t.Errorf("drop scratch database: %v", err)
		}
	})
	return db, dsn
}

// Timed measures how long fn takes and logs it under name; the suite's
// figures in docs/operations.md come from these lines.
func Timed(t testing.TB, name string, fn func()) time.Duration {
	t.Helper()
	start := time.Now()
	fn()
	d := time.Since(start)
	t.Logf("figure: %s: %s", name, d.Round(10*time.Millisecond))
	return d
}
