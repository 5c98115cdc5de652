package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slurmEnv points the CLI at url with a throwaway key and a short timeout.
func slurmEnv(t *testing.T, url string) {
	t.Helper()
	key := filepath.Join(t.TempDir(), "jwt.key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", "")
	t.Setenv("GPUBRIDGE_SLURMREST_URL", url)
	t.Setenv("GPUBRIDGE_SLURMREST_JWT_KEY", key)
	t.Setenv("GPUBRIDGE_SLURMREST_TOKEN", "")
	t.Setenv("GPUBRIDGE_SLURMREST_API", "")
	t.Setenv("GPUBRIDGE_SLURMREST_TIMEOUT", "1s")
}

func TestPingClosedPortFailsFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	slurmEnv(t, url)
	var out, errw bytes.Buffer
	start := time.Now()
	code := run([]string{"ping"}, strings.NewReader(""), &out, &errw)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ping took %s against a closed port", d)
	}
	if !strings.Contains(errw.String(), url) {
		t.Errorf("error does not name %s: %q", url, errw.String())
	}
}
