package testbed

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Env is what .testbed/env exports.
type Env struct {
	Cluster    string
	RestURL    string
	JWTKeyFile string
	RestUser   string
	SlurmDBDSN string // read-only slurm_acct_db
	DBDSN      string // gpubridge's own database
	BenchDBDSN string // read-write slurm_acct_db, for benchmarks
	Root       string
	ExecScript string
	// The second cluster, in the same slurmdbd: its name, its slurmrestd
	// and, inside the root, its slurm.conf (SLURM_CONF for its commands;
	// `-M <name>` reaches it too).
	Cluster2     string
	Cluster2REST string
	Cluster2Conf string
}

const howTo = "the Slurm testbed is not available: run `make testbed-up` (as root) and `source .testbed/env`, then rerun the integration tests"

// Load reads the environment without failing; ok is false when the
// testbed's variables are not set.
func Load() (Env, bool) {
	e := Env{
		Cluster:    os.Getenv("GPUBRIDGE_CLUSTER"),
		RestURL:    os.Getenv("GPUBRIDGE_SLURMREST_URL"),
		JWTKeyFile: os.Getenv("GPUBRIDGE_SLURMREST_JWT_KEY"),
		RestUser:   os.Getenv("GPUBRIDGE_SLURMREST_USER"),
		SlurmDBDSN: os.Getenv("GPUBRIDGE_SLURMDB_DSN"),
		DBDSN:      os.Getenv("GPUBRIDGE_DB_DSN"),
		BenchDBDSN: os.Getenv("GPUBRIDGE_BENCH_SLURMDB_DSN"),
		Root:       os.Getenv("GPUBRIDGE_TESTBED_ROOT"),
		ExecScript: os.Getenv("GPUBRIDGE_TESTBED_EXEC"),

		Cluster2:     os.Getenv("GPUBRIDGE_TESTBED_CLUSTER2"),
		Cluster2REST: os.Getenv("GPUBRIDGE_TESTBED_CLUSTER2_REST"),
		Cluster2Conf: os.Getenv("GPUBRIDGE_TESTBED_CLUSTER2_CONF"),
	}
	ok := e.RestURL != "" && e.JWTKeyFile != "" && e.Root != "" && e.ExecScript != ""
	return e, ok
}

// Require returns the testbed's environment, or fails the test (never
// skips) with instructions when the testbed is not configured or its
// slurmrestd does not accept connections.
func Require(t testing.TB) Env {
	t.Helper()
	e, ok := Load()
	if !ok {
		t.Fatalf("%s (GPUBRIDGE_SLURMREST_URL, GPUBRIDGE_SLURMREST_JWT_KEY, GPUBRIDGE_TESTBED_ROOT or GPUBRIDGE_TESTBED_EXEC is unset)", howTo)
	}
	u, err := url.Parse(e.RestURL)
	if err != nil {
		t.Fatalf("GPUBRIDGE_SLURMREST_URL=%q: %v", e.RestURL, err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		t.Fatalf("%s: slurmrestd at %s: %v", howTo, e.RestURL, err)
	}
	c.Close()
	return e
}

// Exec runs a command inside the testbed's root (as user when not empty)
// and returns its stdout; a non-zero exit fails the test with stderr.
func (e Env) Exec(t testing.TB, user string, args ...string) string {
	t.Helper()
	out, err := e.Run(context.Background(), user, nil, args...)
	if err != nil {
		t.Fatalf("testbed exec %q as %q: %v", strings.Join(args, " "), user, err)
	}
	return out
}

// Run is Exec without a test: it returns stdout and an error that includes stderr.
func (e Env) Run(ctx context.Context, user string, stdin []byte, args ...string) (string, error) {
	var argv []string
	if user != "" {
		argv = append(argv, "--user", user)
	}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, e.ExecScript, argv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
